/**
 * The SDK against the real server (the built `dist/main.js` on a free port): tokens, paging, typed
 * errors, retries honouring `Retry-After`, idempotency keys.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import type { Facility, Package } from "../src/index.js"
import { OAuthError, Tracebridge, TracebridgeError } from "../src/index.js"
import { linkSandbox, recordingFetch, startServer, type TestServer } from "./support/Server.js"

const P = "/v1/connections/{connection_id}/facilities/{facility_id}" as const

let server: TestServer

beforeAll(async () => {
  server = await startServer()
})

afterAll(async () => {
  await server?.stop()
})

const sdk = (options: Partial<ConstructorParameters<typeof Tracebridge>[0]> = {}) =>
  new Tracebridge({ baseUrl: server.baseUrl, clientId: server.clientId, clientSecret: server.clientSecret, ...options })

/** A fresh sandbox connection and its facility with the most packages. */
const connection = async (tb: Tracebridge) => {
  const { connection_id, connection_token } = await linkSandbox(server, await tb.accessToken())
  const facilities = await tb.get("/v1/connections/{connection_id}/facilities", {
    params: { path: { connection_id } }
  })
  let best: { facility: Facility; total: number } | undefined
  for (const facility of facilities.data) {
    const page = await tb.get(`${P}/packages`, {
      params: { path: { connection_id, facility_id: facility.id }, query: { per_page: 1 } }
    })
    if (best === undefined || page.pagination.total > best.total) best = { facility, total: page.pagination.total }
  }
  return { connection_id, connection_token, facility: best!.facility, facilities: facilities.data }
}

describe("tokens", () => {
  it("gets one access token with the client credentials for many concurrent first calls", async () => {
    const { log, fetch } = recordingFetch()
    const tb = sdk({ fetch })
    const answers = await Promise.all(Array.from({ length: 8 }, () => tb.get("/v1/connections")))
    for (const answer of answers) expect(answer.pagination.page).toBe(1)
    const tokenCalls = log.filter((e) => e.path === "/v1/oauth/token")
    expect(tokenCalls).toHaveLength(1)
    expect(JSON.parse(tokenCalls[0]!.body)).toMatchObject({ grant_type: "client_credentials" })
    expect(tb.tokensIssued).toBe(1)
    const bearer = new Set(log.filter((e) => e.path === "/v1/connections").map((e) => e.headers.get("authorization")))
    expect([...bearer]).toEqual([`Bearer ${await tb.accessToken()}`])
    expect(await tb.accessToken()).toMatch(/^tb_at_/)
  })

  it("refreshes with the refresh grant shortly before the token expires, once for concurrent calls", async () => {
    let now = Date.now()
    const { log, fetch } = recordingFetch()
    const tb = sdk({ fetch, now: () => now, refreshMarginSeconds: 60 })
    const first = await tb.accessToken()
    now += 3_530_000 // 70 s before the hour is up: not yet
    await tb.get("/v1/connections")
    expect(await tb.accessToken()).toBe(first)
    now += 20_000 // 50 s before: inside the margin
    await Promise.all([tb.get("/v1/connections"), tb.get("/v1/providers"), tb.get("/v1/webhooks")])
    const grants = log.filter((e) => e.path === "/v1/oauth/token").map((e) => JSON.parse(e.body).grant_type)
    expect(grants).toEqual(["client_credentials", "refresh_token"])
    expect(tb.tokensIssued).toBe(2)
    const second = await tb.accessToken()
    expect(second).not.toBe(first)
    // The server rotated the refresh token: the calls after it used the new access token.
    expect(log.at(-1)!.headers.get("authorization")).toBe(`Bearer ${second}`)
    expect(log.slice(-3).every((e) => e.status === 200)).toBe(true)
  })

  it("uses a fixed connection token (tb_ct_…) for its own connection only", async () => {
    const { connection_id, connection_token } = await linkSandbox(server, await sdk().accessToken())
    expect(connection_token).toMatch(/^tb_ct_/)
    const { log, fetch } = recordingFetch()
    const tb = new Tracebridge({ baseUrl: server.baseUrl, token: connection_token, fetch })
    const facilities = await tb.get("/v1/connections/{connection_id}/facilities", {
      params: { path: { connection_id } }
    })
    expect(facilities.data.length).toBeGreaterThan(0)
    const refused = await tb.post("/v1/link/token/create", { body: {} }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(TracebridgeError)
    expect(refused).toMatchObject({ status: 403, type: "permission_error", code: "forbidden" })
    expect(log.every((e) => e.headers.get("authorization") === `Bearer ${connection_token}`)).toBe(true)
    expect(log.some((e) => e.path === "/v1/oauth/token")).toBe(false)
  })

  it("throws an OAuthError for wrong client credentials", async () => {
    const tb = sdk({ clientSecret: "tb_secret_not_this_one" })
    const error = await tb.get("/v1/connections").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OAuthError)
    expect(error).toMatchObject({ status: 401, error: "invalid_client" })
    expect((error as OAuthError).requestId).toMatch(/^req_/)
  })
})

describe("paging", () => {
  it("iterates every item of a list across pages", async () => {
    const tb = sdk()
    const { connection_id, facility } = await connection(tb)
    const path = { connection_id, facility_id: facility.id }
    const first = await tb.get(`${P}/packages`, { params: { path, query: { per_page: 100 } } })
    const seen: Array<Package> = []
    for await (const pkg of tb.paginate(`${P}/packages`, { params: { path, query: { per_page: 9 } } })) {
      expectTypeOf(pkg).toEqualTypeOf<Package>()
      seen.push(pkg)
    }
    expect(seen.length).toBe(first.pagination.total)
    expect(new Set(seen.map((p) => p.id)).size).toBe(seen.length)
    expect(seen.map((p) => p.id).slice(0, 9)).toEqual(first.data.slice(0, 9).map((p) => p.id))

    let pages = 0
    for await (const page of tb.pages(`${P}/packages`, { params: { path, query: { per_page: 9, page: 2 } } })) {
      pages++
      expect(page.pagination.page).toBe(pages + 1)
    }
    expect(pages).toBe(Math.ceil(first.pagination.total / 9) - 1)
    expect(pages).toBeGreaterThan(0)
  })
})

describe("the change feed", () => {
  it("changePages walks the feed to its end and its last cursor picks up only what changed since", async () => {
    const tb = sdk()
    const { connection_id, facility } = await connection(tb)
    const path = { connection_id, facility_id: facility.id }
    // the sandbox connection's sync starts with its status; wait for this facility to be live
    for (let i = 0; i < 600; i++) {
      const status = await tb.get("/v1/connections/{connection_id}/sync", { params: { path: { connection_id } } })
      if (status.data.facilities.find((f) => f.facility_id === facility.id)?.status === "live") break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const seen: Array<string> = []
    let cursor: string | undefined
    let pages = 0
    for await (const page of tb.changePages(path, { limit: 50, types: "packages" })) {
      pages++
      seen.push(...page.data.map((c) => c.id))
      cursor = page.meta.next_cursor
      expect(page.meta.sync.status).toBe("live")
    }
    const all = await tb.get(`${P}/packages`, { params: { path, query: { per_page: 100 } } })
    expect(seen.length).toBe(all.pagination.total)
    expect(new Set(seen).size).toBe(seen.length)
    expect(pages).toBe(Math.max(1, Math.ceil(all.pagination.total / 50)))
    const later: Array<unknown> = []
    for await (const change of tb.changes(path, { cursor: cursor!, types: "packages" })) later.push(change)
    expect(later).toEqual([])
  }, 60_000)
})

describe("the change feed while it fills", () => {
  it("changes() on a new connection waits for the backfill and yields every package, not nothing", async () => {
    const tb = sdk()
    const { connection_id, facility } = await connection(tb)
    const path = { connection_id, facility_id: facility.id }
    // a slow state system keeps the backfill going; the first page comes while it fills
    await tb.put("/v1/sandbox/{connection_id}/faults", {
      params: { path: { connection_id } },
      body: { kind: "slow", delay_ms: 20 }
    })
    const first = await tb.get(`${P}/changes`, { params: { path, query: { types: "packages" } } })
    expect(first.meta.sync.status).toBe("backfilling")
    expect(first.meta.has_more).toBe(true)
    await tb.delete("/v1/sandbox/{connection_id}/faults", { params: { path: { connection_id } } })
    const seen: Array<string> = []
    for await (const change of tb.changes(path, { types: "packages", waitMs: 50 })) seen.push(change.object_id)
    const all = await tb.get(`${P}/packages`, { params: { path, query: { per_page: 100 } } })
    expect(seen.length).toBeGreaterThan(0)
    expect(new Set(seen)).toEqual(new Set(all.data.map((p) => p.id)))
  }, 60_000)
})

describe("errors", () => {
  it("throws a TracebridgeError with status, type, code, message, request id and param", async () => {
    const tb = sdk()
    const { connection_id, facility } = await connection(tb)
    const path = { connection_id, facility_id: facility.id }
    const missing = await tb.get(`${P}/packages/{id}`, { params: { path: { ...path, id: "pkg_nope" } } }).catch((
      e: unknown
    ) => e) as TracebridgeError
    expect(missing).toBeInstanceOf(TracebridgeError)
    expect(missing).toMatchObject({ status: 404, type: "not_found_error", code: "resource_not_found" })
    expect(missing.requestId).toMatch(/^req_/)
    expect(missing.message.length).toBeGreaterThan(0)

    const invalid = await tb.get(`${P}/packages`, { params: { path, query: { per_page: 101 } } }).catch((
      e: unknown
    ) => e) as TracebridgeError
    expect(invalid).toMatchObject({
      status: 400,
      type: "validation_error",
      code: "invalid_parameter",
      param: "per_page"
    })
  })
})

describe("idempotency keys", () => {
  it("sends a new Idempotency-Key with every write, or the one given (then the server replays)", async () => {
    const { log, fetch } = recordingFetch()
    const tb = sdk({ fetch })
    const { connection_id, facility } = await connection(tb)
    const path = { connection_id, facility_id: facility.id }
    const list = await tb.get(`${P}/packages`, { params: { path, query: { per_page: 100 } } })
    const source = list.data.find((p) => !p.is_on_hold && p.quantity >= 4)!
    const body = {
      item_name: source.item_name,
      item_category: source.item_category,
      quantity: 1,
      unit_of_measure: source.unit_of_measure,
      source_package_ids: [source.id]
    }
    const a = await tb.post(`${P}/packages`, { params: { path }, body })
    const b = await tb.post(`${P}/packages`, { params: { path }, body })
    expect(a.data.id).not.toBe(b.data.id)
    const keys = log.filter((e) => e.method === "POST" && e.path.endsWith("/packages")).map((e) =>
      e.headers.get("idempotency-key")
    )
    expect(keys).toHaveLength(2)
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(keys[0]).not.toBe(keys[1])

    const key = `order-${Date.now()}`
    const c = await tb.post(`${P}/packages`, { params: { path }, body, idempotencyKey: key })
    const d = await tb.post(`${P}/packages`, { params: { path }, body, idempotencyKey: key })
    expect(d.data.id).toBe(c.data.id)
    const after = await tb.get(`${P}/packages/{id}`, { params: { path: { ...path, id: source.id } } })
    expect(after.data.quantity).toBeCloseTo(source.quantity - 3, 6)

    const reused = await tb.post(`${P}/packages`, {
      params: { path },
      body: { ...body, quantity: 2 },
      idempotencyKey: key
    })
      .catch((e: unknown) => e)
    expect(reused).toMatchObject({ status: 409, code: "idempotency_key_reused" })
  })
})

describe("retries", () => {
  it("retries a read after the Retry-After of a 503 from a rate-limited state system", async () => {
    const waits: Array<number> = []
    let connectionId = ""
    const tb: Tracebridge = sdk({
      retry: {
        maxAttempts: 3,
        maxDelayMs: 60_000,
        sleep: async (ms) => {
          waits.push(ms)
          // While the SDK waits, the state system recovers.
          await tb.delete("/v1/sandbox/{connection_id}/faults", { params: { path: { connection_id: connectionId } } })
        }
      }
    })
    const { connection_id, facility } = await connection(tb)
    connectionId = connection_id
    await tb.put("/v1/sandbox/{connection_id}/faults", {
      params: { path: { connection_id } },
      body: { kind: "rate_limited", retry_after: 45 }
    })
    const path = { connection_id, facility_id: facility.id }
    const direct = await fetch(`${server.baseUrl}/v1/connections/${connection_id}/facilities/${facility.id}/packages`, {
      headers: { authorization: `Bearer ${await tb.accessToken()}` }
    })
    expect(direct.status).toBe(503)
    // Past the server's own 30 s budget for upstream retries: it answers at once.
    expect(direct.headers.get("retry-after")).toBe("45")
    expect(await direct.json()).toMatchObject({ error: { type: "provider_error", code: "provider_rate_limited" } })

    const page = await tb.get(`${P}/packages`, { params: { path } })
    expect(page.data.length).toBeGreaterThan(0)
    expect(waits).toEqual([45_000])
  })

  it("gives up after maxAttempts and throws the last error with its Retry-After", async () => {
    const waits: Array<number> = []
    const { log, fetch } = recordingFetch()
    const tb = sdk({ fetch, retry: { maxAttempts: 3, sleep: async (ms) => void waits.push(ms) } })
    const { connection_id, facility } = await connection(tb)
    await tb.put("/v1/sandbox/{connection_id}/faults", {
      params: { path: { connection_id } },
      body: { kind: "rate_limited", retry_after: 40 }
    })
    const path = { connection_id, facility_id: facility.id }
    const error = await tb.get(`${P}/packages`, { params: { path } }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TracebridgeError)
    expect(error).toMatchObject({ status: 503, code: "provider_rate_limited", retryAfter: 40 })
    // Retry-After is honoured up to maxDelayMs (default 30 s).
    expect(waits).toEqual([30_000, 30_000])
    expect(log.filter((e) => e.path.endsWith("/packages") && e.status === 503)).toHaveLength(3)
  })

  it("retries a write with its Idempotency-Key, never a write without one", async () => {
    const { log, fetch } = recordingFetch()
    const waits: Array<number> = []
    const retry = { maxAttempts: 2, maxDelayMs: 60_000, sleep: async (ms: number) => void waits.push(ms) }
    const tb = sdk({ fetch, retry })
    const { connection_id, facility } = await connection(tb)
    const path = { connection_id, facility_id: facility.id }
    const list = await tb.get(`${P}/packages`, { params: { path, query: { per_page: 100 } } })
    const source = list.data.find((p) => !p.is_on_hold && p.quantity >= 2)!
    const body = {
      item_name: source.item_name,
      item_category: source.item_category,
      quantity: 1,
      unit_of_measure: source.unit_of_measure,
      source_package_ids: [source.id]
    }
    await tb.put("/v1/sandbox/{connection_id}/faults", {
      params: { path: { connection_id } },
      body: { kind: "rate_limited", retry_after: 31 }
    })
    const keyed = await tb.post(`${P}/packages`, { params: { path }, body }).catch((e: unknown) => e)
    expect(keyed).toMatchObject({ status: 503, code: "provider_rate_limited" })
    const writes = log.filter((e) => e.method === "POST" && e.path.endsWith("/packages"))
    expect(writes).toHaveLength(2)
    expect(writes[0]!.headers.get("idempotency-key")).toBeTruthy()
    expect(writes[1]!.headers.get("idempotency-key")).toBe(writes[0]!.headers.get("idempotency-key"))
    expect(waits).toEqual([31_000])

    const { log: plainLog, fetch: plainFetch } = recordingFetch()
    const plain = sdk({ fetch: plainFetch, retry, idempotencyKeys: false })
    const unkeyed = await plain.post(`${P}/packages`, { params: { path }, body }).catch((e: unknown) => e)
    expect(unkeyed).toMatchObject({ status: 503, code: "provider_rate_limited", retryAfter: 31 })
    const plainWrites = plainLog.filter((e) => e.method === "POST" && e.path.endsWith("/packages"))
    expect(plainWrites).toHaveLength(1)
    expect(plainWrites[0]!.headers.has("idempotency-key")).toBe(false)
    expect(waits).toEqual([31_000])
  })
})
