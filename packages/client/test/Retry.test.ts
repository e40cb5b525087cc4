/**
 * The retry rules in isolation (a scripted `fetch`): `Retry-After` as seconds or an HTTP date, the
 * cap, backoff without it, network errors, and which requests may be sent twice.
 */
import { describe, expect, it } from "vitest"
import {
  delayFor,
  fromResponse,
  isRetryable,
  OAuthError,
  parseRetryAfter,
  Tracebridge,
  TracebridgeError
} from "../src/index.js"

describe("parseRetryAfter", () => {
  it("reads delay-seconds and HTTP dates, and nothing else", () => {
    const now = Date.parse("2026-11-26T12:00:00Z")
    expect(parseRetryAfter("3", now)).toBe(3000)
    expect(parseRetryAfter("0.5", now)).toBe(500)
    expect(parseRetryAfter("Thu, 26 Nov 2026 12:00:07 GMT", now)).toBe(7000)
    expect(parseRetryAfter("Thu, 26 Nov 2026 11:00:00 GMT", now)).toBe(0)
    expect(parseRetryAfter("soon", now)).toBeUndefined()
    expect(parseRetryAfter(null, now)).toBeUndefined()
  })

  it("caps Retry-After at maxDelayMs and backs off exponentially without it", () => {
    expect(delayFor(1, 90_000, {})).toBe(30_000)
    expect(delayFor(1, 90_000, { maxDelayMs: 120_000 })).toBe(90_000)
    const second = delayFor(2, undefined, { baseDelayMs: 100 })
    expect(second).toBeGreaterThanOrEqual(160)
    expect(second).toBeLessThanOrEqual(240)
  })

  it("retries idempotent methods, and writes only with an Idempotency-Key", () => {
    expect(isRetryable("GET", new Headers())).toBe(true)
    expect(isRetryable("DELETE", new Headers())).toBe(true)
    expect(isRetryable("POST", new Headers())).toBe(false)
    expect(isRetryable("POST", new Headers({ "Idempotency-Key": "k" }))).toBe(true)
  })
})

describe("errors", () => {
  it("tells the API's error body, the OAuth body and anything else apart", () => {
    const headers = new Headers({ "X-Request-Id": "req_h" })
    const api = fromResponse(
      409,
      { error: { type: "conflict_error", code: "c", message: "m", request_id: "req_b" } },
      headers
    )
    expect(api).toBeInstanceOf(TracebridgeError)
    expect(api).toMatchObject({ status: 409, type: "conflict_error", code: "c", message: "m", requestId: "req_b" })
    const oauth = fromResponse(400, { error: "invalid_grant", error_description: "used twice" }, headers)
    expect(oauth).toBeInstanceOf(OAuthError)
    expect(oauth).toMatchObject({ error: "invalid_grant", errorDescription: "used twice", requestId: "req_h" })
    const html = fromResponse(502, "<html>Bad gateway</html>", headers)
    expect(html).toMatchObject({ status: 502, type: "api_error", code: "unexpected_response", requestId: "req_h" })
  })
})

describe("a scripted fetch", () => {
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } })
  const page = { data: [], meta: {}, pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 } }

  it("retries a GET after a network error, then throws the error when attempts run out", async () => {
    const script: Array<() => Response> = [
      () => {
        throw new TypeError("fetch failed")
      },
      () => answer(200, page)
    ]
    const waits: Array<number> = []
    const tb = new Tracebridge({
      baseUrl: "https://api.example",
      token: "tb_ct_x",
      fetch: async () => script.shift()!(),
      retry: { baseDelayMs: 10, sleep: async (ms) => void waits.push(ms) }
    })
    expect((await tb.get("/v1/connections")).pagination.total).toBe(0)
    expect(waits).toHaveLength(1)

    const down = new Tracebridge({
      baseUrl: "https://api.example",
      token: "tb_ct_x",
      fetch: async () => {
        throw new TypeError("fetch failed")
      },
      retry: { maxAttempts: 2, sleep: async () => {} }
    })
    await expect(down.get("/v1/connections")).rejects.toThrow("fetch failed")
  })

  it("honours an HTTP-date Retry-After on a 504 and resends the same body and key", async () => {
    const sent: Array<{ key: string | null; body: string }> = []
    let n = 0
    const waits: Array<number> = []
    const now = Date.parse("2026-11-26T12:00:00Z")
    const tb = new Tracebridge({
      baseUrl: "https://api.example",
      token: "tb_ct_x",
      now: () => now,
      fetch: async (request) => {
        sent.push({ key: request.headers.get("idempotency-key"), body: await request.text() })
        return n++ === 0
          ? answer(
            504,
            { error: { type: "provider_error", code: "provider_timeout", message: "m", request_id: "r" } },
            {
              "retry-after": "Thu, 26 Nov 2026 12:00:04 GMT"
            }
          )
          : answer(200, { data: { link_token: "link-sandbox-1", expires_at: "x" }, meta: {} })
      },
      retry: { sleep: async (ms) => void waits.push(ms) }
    })
    const link = await tb.post("/v1/link/token/create", { body: { external_id: "e" }, idempotencyKey: "mine" })
    expect(link.data.link_token).toBe("link-sandbox-1")
    expect(waits).toEqual([4000])
    expect(sent).toEqual([{ key: "mine", body: "{\"external_id\":\"e\"}" }, {
      key: "mine",
      body: "{\"external_id\":\"e\"}"
    }])
  })

  it("needs credentials or a token", () => {
    expect(() => new Tracebridge({ baseUrl: "https://api.example" })).toThrow(/clientId and clientSecret, or a token/)
  })
})
