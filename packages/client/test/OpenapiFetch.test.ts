/**
 * Issue #19's "done when": a client made only of `openapi-fetch` and the types openapi-typescript
 * generates from the OpenAPI document (no SDK code) runs the whole sandbox flow against the real
 * server, typed: token, link token, sandbox public token, exchange, facilities, packages (every
 * page), one package, a split, a lab result, a transfer, a webhook subscription, a simulated
 * scenario and its delivery, the subscriptions' list and a sandbox reset.
 *
 * The `expectTypeOf` lines are checked by `tsc -b` (the test project is type-checked in CI): the
 * answers are the document's schemas, not `any`.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import createClient from "openapi-fetch"
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import type { components, paths } from "../src/generated/openapi.js"
import { startServer, type TestServer } from "./support/Server.js"

type Schemas = components["schemas"]

const P = "/v1/connections/{connection_id}/facilities/{facility_id}" as const

let server: TestServer
let receiver: Server
let receiverUrl = ""
const deliveries: Array<{ headers: IncomingHttpHeaders; body: string }> = []

beforeAll(async () => {
  server = await startServer()
  receiver = createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      deliveries.push({ headers: req.headers, body })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
})

afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve))
  await server?.stop()
})

describe.sequential("the sandbox flow with openapi-fetch and the generated types only", () => {
  // The client is made once a token is known (the flow's first step).
  let api: ReturnType<typeof createClient<paths>>
  let connectionId = ""
  let facilities: Array<Schemas["Facility"]> = []
  let facility: Schemas["Facility"]
  const packages: Array<Schemas["Package"]> = []
  let source: Schemas["Package"]
  let split: Schemas["Package"]

  it("gets an access token with the client-credentials grant", async () => {
    const anonymous = createClient<paths>({ baseUrl: server.baseUrl })
    const { data, error, response } = await anonymous.POST("/v1/oauth/token", {
      body: { grant_type: "client_credentials", client_id: server.clientId, client_secret: server.clientSecret }
    })
    expect(error).toBeUndefined()
    expect(response.status).toBe(200)
    expectTypeOf(data!).toEqualTypeOf<Schemas["TokenResponse"]>()
    expect(data!.token_type).toBe("Bearer")
    expect(data!.access_token).toMatch(/^tb_at_/)
    expect(data!.expires_in).toBe(3600)
    api = createClient<paths>({ baseUrl: server.baseUrl, headers: { Authorization: `Bearer ${data!.access_token}` } })

    const refused = await anonymous.POST("/v1/oauth/token", {
      body: { grant_type: "client_credentials", client_id: server.clientId, client_secret: "tb_secret_wrong" }
    })
    expect(refused.response.status).toBe(401)
    expect(refused.error).toMatchObject({ error: "invalid_client" })
  })

  it("creates a link token, a sandbox public token, and exchanges it for a connection", async () => {
    const link = await api.POST("/v1/link/token/create", { body: { external_id: "sdk-proof", state: "opaque" } })
    expect(link.response.status).toBe(200)
    expect(link.data!.data.link_token).toMatch(/^link-sandbox-/)
    expect(Date.parse(link.data!.data.expires_at)).toBeGreaterThan(Date.now())

    const created = await api.POST("/v1/sandbox/public_token/create", {
      body: { provider: "provider_a", state: "CO", external_id: "sdk-proof" }
    })
    expect(created.response.status).toBe(200)
    const publicToken = created.data!.data.public_token
    expect(publicToken).toMatch(/^public-sandbox-/)

    const exchanged = await api.POST("/v1/link/token/exchange", { body: { public_token: publicToken } })
    expect(exchanged.response.status).toBe(200)
    expectTypeOf(exchanged.data!.data).toEqualTypeOf<Schemas["PublicTokenExchanged"]>()
    expect(exchanged.data!.data).toMatchObject({ provider: "provider_a", state: "CO", status: "active" })
    expect(exchanged.data!.data.connection_token).toMatch(/^tb_ct_/)
    connectionId = exchanged.data!.data.connection_id

    const again = await api.POST("/v1/link/token/exchange", { body: { public_token: publicToken } })
    expect(again.response.status).toBe(400)
    expect(again.error).toMatchObject({ error: { type: "validation_error" } })
  })

  it("lists the connection's facilities", async () => {
    const { data, response } = await api.GET("/v1/connections/{connection_id}/facilities", {
      params: { path: { connection_id: connectionId } }
    })
    expect(response.status).toBe(200)
    expectTypeOf(data!.data).toEqualTypeOf<Array<Schemas["Facility"]>>()
    facilities = data!.data
    expect(facilities.length).toBeGreaterThan(1)
    expect(data!.pagination).toMatchObject({ page: 1, per_page: 25, total: facilities.length })
    for (const f of facilities) expect(f).toMatchObject({ provider: "provider_a", state: "CO" })
  })

  it("lists every package of a facility, page by page", async () => {
    // The facility with the most packages that are not on hold (a split needs one).
    for (const f of facilities) {
      const first = await api.GET(`${P}/packages`, {
        params: { path: { connection_id: connectionId, facility_id: f.id }, query: { per_page: 100 } }
      })
      if (first.data!.data.some((p) => !p.is_on_hold && p.quantity > 2)) {
        facility = f
        break
      }
    }
    expect(facility).toBeDefined()
    const path = { connection_id: connectionId, facility_id: facility.id }
    let page = 1
    for (;;) {
      const { data, response } = await api.GET(`${P}/packages`, { params: { path, query: { page, per_page: 7 } } })
      expect(response.status).toBe(200)
      expectTypeOf(data!.data).toEqualTypeOf<Array<Schemas["Package"]>>()
      expect(data!.pagination.page).toBe(page)
      expect(data!.data.length).toBeLessThanOrEqual(7)
      packages.push(...data!.data)
      if (page >= data!.pagination.total_pages) {
        expect(packages.length).toBe(data!.pagination.total)
        break
      }
      page++
    }
    expect(page).toBeGreaterThan(1)
    expect(new Set(packages.map((p) => p.id)).size).toBe(packages.length)

    const tooMany = await api.GET(`${P}/packages`, { params: { path, query: { per_page: 101 } } })
    expect(tooMany.response.status).toBe(400)
    expect(tooMany.error).toMatchObject({ error: { code: "invalid_parameter", param: "per_page" } })
  })

  it("gets one package", async () => {
    source = packages.find((p) => !p.is_on_hold && p.quantity > 2)!
    const { data, response } = await api.GET(`${P}/packages/{id}`, {
      params: { path: { connection_id: connectionId, facility_id: facility.id, id: source.id } }
    })
    expect(response.status).toBe(200)
    expectTypeOf(data!.data).toEqualTypeOf<Schemas["Package"]>()
    expect(data!.data).toEqual(source)
  })

  it("splits a package (a write, with an Idempotency-Key replayed once)", async () => {
    const path = { connection_id: connectionId, facility_id: facility.id }
    const body = {
      item_name: source.item_name,
      item_category: source.item_category,
      quantity: 1,
      unit_of_measure: source.unit_of_measure,
      source_package_ids: [source.id]
    }
    const key = `sdk-proof-split-${Date.now()}`
    const first = await api.POST(`${P}/packages`, { params: { path, header: { "Idempotency-Key": key } }, body })
    expect(first.response.status).toBe(201)
    expectTypeOf(first.data!.data).toEqualTypeOf<Schemas["Package"]>()
    split = first.data!.data
    expect(split).toMatchObject({ item_name: source.item_name, quantity: 1, source_package_ids: [source.id] })
    const replay = await api.POST(`${P}/packages`, { params: { path, header: { "Idempotency-Key": key } }, body })
    expect(replay.response.status).toBe(201)
    expect(replay.response.headers.get("Idempotent-Replayed")).toBe("true")
    expect(replay.data!.data.id).toBe(split.id)

    const after = await api.GET(`${P}/packages/{id}`, { params: { path: { ...path, id: source.id } } })
    expect(after.data!.data.quantity).toBeCloseTo(source.quantity - 1, 6)

    const tooMuch = await api.POST(`${P}/packages`, { params: { path }, body: { ...body, quantity: 1e9 } })
    expect(tooMuch.response.status).toBe(422)
    expect(tooMuch.error).toMatchObject({ error: { type: "invalid_request_error", code: "insufficient_quantity" } })
  })

  it("writes a lab result at the testing lab (the facility with the labs capability)", async () => {
    const lab = facilities.find((f) => f.capabilities.includes("labs"))
    expect(lab).toBeDefined()
    const path = { connection_id: connectionId, facility_id: lab!.id }
    const listed = await api.GET(`${P}/packages`, { params: { path, query: { per_page: 5 } } })
    expect(listed.data!.data.length).toBeGreaterThan(0)
    const sample = listed.data!.data[0]!
    const { data, response, error } = await api.POST(`${P}/lab_results`, {
      params: { path },
      body: {
        package_id: sample.id,
        lab_name: lab!.name,
        lab_license: lab!.license_number,
        overall_passed: true,
        results: [{ name: "THC", category: "potency", value: 21.5, unit: "%", passed: true, notes: null }]
      }
    })
    expect(error).toBeUndefined()
    expect(response.status).toBe(201)
    expectTypeOf(data!.data).toEqualTypeOf<Schemas["LabResult"]>()
    expect(data!.data).toMatchObject({ package_id: sample.id, overall_passed: true, facility_id: lab!.id })
    expect(data!.data.results[0]).toMatchObject({ name: "THC", value: 21.5, passed: true })
    const results = await api.GET(`${P}/lab_results`, { params: { path, query: { package_id: sample.id } } })
    expect(results.data!.data.map((r) => r.id)).toContain(data!.data.id)
  })

  it("creates a transfer of the new package to another facility", async () => {
    const recipient = facilities.find((f) => f.id !== facility.id)!
    const { data, response, error } = await api.POST(`${P}/transfers`, {
      params: { path: { connection_id: connectionId, facility_id: facility.id } },
      body: {
        transfer_type: "Wholesale",
        shipper_facility: facility.id,
        recipient_facility: recipient.license_number,
        packages: [{
          package_id: split.id,
          tag: split.tag,
          item_name: split.item_name,
          quantity: 1,
          unit_of_measure: split.unit_of_measure
        }]
      }
    })
    expect(error).toBeUndefined()
    expect(response.status).toBe(201)
    expectTypeOf(data!.data).toEqualTypeOf<Schemas["Transfer"]>()
    expect(data!.data.status).toBe("pending")
    expect(data!.data.packages.map((p) => p.package_id)).toEqual([split.id])
  })

  it("subscribes a webhook, simulates a scenario, receives the signed delivery and lists the subscriptions", async () => {
    const created = await api.POST("/v1/webhooks", {
      body: { url: receiverUrl, events: ["lab_result.received"], description: "sdk proof" }
    })
    expect(created.response.status).toBe(201)
    expectTypeOf(created.data!.data).toEqualTypeOf<Schemas["WebhookWithSecret"]>()
    expect(created.data!.data).toMatchObject({ url: receiverUrl, status: "enabled", events: ["lab_result.received"] })
    expect(created.data!.data.secret).toMatch(/^whsec_/)

    const simulated = await api.POST("/v1/sandbox/{connection_id}/simulate", {
      params: { path: { connection_id: connectionId } },
      body: { scenario: "lab_result_received", params: { package_id: split.id, result: "fail" } }
    })
    expect(simulated.response.status).toBe(200)
    expect(simulated.data!.data).toMatchObject({ scenario: "lab_result_received", deliveries: 1 })
    const event = simulated.data!.data.event!
    expect(event.type).toBe("lab_result.received")
    if (event.type === "lab_result.received") {
      expect(event.data).toMatchObject({ connection_id: connectionId, package_id: split.id, passed: false })
      expect(event.data.failed_panel.length).toBeGreaterThan(0)
    }

    for (let i = 0; i < 100 && deliveries.length === 0; i++) await new Promise((r) => setTimeout(r, 100))
    expect(deliveries).toHaveLength(1)
    expect(deliveries[0]!.headers["x-tracebridge-event-id"]).toBe(event.id)
    expect(deliveries[0]!.headers["x-tracebridge-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(JSON.parse(deliveries[0]!.body)).toEqual(event)

    const listed = await api.GET("/v1/webhooks")
    expect(listed.response.status).toBe(200)
    expectTypeOf(listed.data!.data).toEqualTypeOf<Array<Schemas["Webhook"]>>()
    expect(listed.data!.data.map((w) => w.id)).toEqual([created.data!.data.id])
    expect(listed.data!.data[0]).not.toHaveProperty("secret")
  })

  it("resets the sandbox connection: the split package is gone", async () => {
    const { data, response } = await api.POST("/v1/sandbox/{connection_id}/reset", {
      params: { path: { connection_id: connectionId } }
    })
    expect(response.status).toBe(200)
    expectTypeOf(data!.data).toEqualTypeOf<Schemas["SandboxReset"]>()
    expect(data!.data.connection_id).toBe(connectionId)
    const gone = await api.GET(`${P}/packages/{id}`, {
      params: { path: { connection_id: connectionId, facility_id: facility.id, id: split.id } }
    })
    expect(gone.response.status).toBe(404)
    expect(gone.error).toMatchObject({ error: { type: "not_found_error", code: "resource_not_found" } })
  })
})
