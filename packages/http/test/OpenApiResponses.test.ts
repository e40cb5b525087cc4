/**
 * Real answers against the served OpenAPI document (issue #19): every operation's happy path and
 * its main errors are sent to the running service, and each answer's status must be one the
 * operation documents, with a body its schema there accepts. A generated client trusts exactly
 * this.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import * as OpenApiValidator from "./support/OpenApiValidator.js"
import type { Json } from "./support/TestApp.js"
import { call, insertProductionConnection, linkSandbox, productionSignIn, signIn, TestApp } from "./support/TestApp.js"

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

describe("OpenAPI document against real answers", () => {
  it.effect("every operation's answers, happy and refused, match what it documents", () =>
    Effect.gen(function*() {
      const doc = (yield* call("GET", "/v1/openapi.json")).body
      const validator = OpenApiValidator.make(doc)
      const problems: Array<string> = []
      const answered = new Map<string, Set<number>>()

      /** Sends a request as `operationId`, expects `status`, and checks the answer against the document. */
      const send = (
        operationId: string,
        status: number,
        method: Method,
        path: string,
        options: Parameters<typeof call>[2] = {}
      ) =>
        Effect.gen(function*() {
          const o = validator.operation(operationId)
          assert.strictEqual(o.method.toUpperCase(), method, `${operationId} is a ${o.method}`)
          const answer: Json = yield* call(method, path, options)
          assert.strictEqual(answer.status, status, `${operationId}: ${JSON.stringify(answer.body).slice(0, 400)}`)
          problems.push(...validator.response(operationId, answer.status, answer.body))
          if (options.json !== undefined && answer.status < 300) {
            problems.push(...validator.request(operationId, options.json))
          }
          answered.set(operationId, (answered.get(operationId) ?? new Set()).add(answer.status))
          return answer.body
        })

      // OAuth: both grants, and the RFC 6749 refusals
      const me = yield* signIn
      const client = { client_id: me.client_id, client_secret: me.client_secret }
      const issued = yield* send("createToken", 200, "POST", "/v1/oauth/token", {
        json: { grant_type: "client_credentials", ...client }
      })
      yield* send("createToken", 200, "POST", "/v1/oauth/token", {
        form: { grant_type: "refresh_token", refresh_token: issued.refresh_token }
      })
      yield* send("createToken", 401, "POST", "/v1/oauth/token", {
        json: { grant_type: "client_credentials", client_id: me.client_id, client_secret: "tb_secret_wrong" }
      })
      yield* send("createToken", 400, "POST", "/v1/oauth/token", { json: { grant_type: "password" } })
      yield* send("createToken", 415, "POST", "/v1/oauth/token", { raw: "grant_type", contentType: "text/plain" })
      const token = me.access
      const auth = { token }

      yield* send("listProviders", 200, "GET", "/v1/providers", auth)
      yield* send("listProviders", 401, "GET", "/v1/providers", { token: "tb_at_unknown" })

      // Linking
      yield* send("createLinkToken", 200, "POST", "/v1/link/token/create", {
        ...auth,
        json: { external_id: "store-1" }
      })
      yield* send("createLinkToken", 400, "POST", "/v1/link/token/create", { ...auth, json: { colour: "blue" } })
      yield* send("createLinkToken", 404, "POST", "/v1/link/token/create", {
        ...auth,
        json: { connection_id: "conn_00000000000000000000000000000000" }
      })
      const created = yield* send("createSandboxPublicToken", 200, "POST", "/v1/sandbox/public_token/create", {
        ...auth,
        json: { provider: "provider_a", state: "CO" }
      })
      yield* send("createSandboxPublicToken", 400, "POST", "/v1/sandbox/public_token/create", {
        ...auth,
        json: { provider: "provider_a", state: "CO", credentials: { username: "nobody", password: "wrong" } }
      })
      const exchange = { ...auth, json: { public_token: created.data.public_token } }
      const exchanged = yield* send("exchangePublicToken", 200, "POST", "/v1/link/token/exchange", exchange)
      yield* send("exchangePublicToken", 400, "POST", "/v1/link/token/exchange", exchange)
      const connectionId = exchanged.data.connection_id as string
      const connectionToken = exchanged.data.connection_token as string

      // Connections and facilities
      yield* send("listConnections", 200, "GET", "/v1/connections?per_page=5", auth)
      yield* send("listConnections", 400, "GET", "/v1/connections?per_page=0", auth)
      yield* send("getConnection", 200, "GET", `/v1/connections/${connectionId}`, auth)
      yield* send("getConnection", 404, "GET", "/v1/connections/conn_00000000000000000000000000000000", auth)
      const other = yield* linkSandbox(token)
      yield* send("getConnection", 403, "GET", `/v1/connections/${other.connection_id}`, { token: connectionToken })
      const facilities = (yield* send("listFacilities", 200, "GET", `/v1/connections/${connectionId}/facilities`, auth))
        .data as ReadonlyArray<Json["body"]>
      yield* send("listFacilities", 400, "GET", `/v1/connections/${connectionId}/facilities?page=x`, auth)
      const facility = facilities[0]
      yield* send("getFacility", 200, "GET", `/v1/connections/${connectionId}/facilities/${facility.id}`, auth)
      yield* send("getFacility", 404, "GET", `/v1/connections/${connectionId}/facilities/fac_unknown`, auth)

      // The managed sync: the status (which starts a sandbox connection's sync) and the feed
      yield* send("getConnectionSync", 200, "GET", `/v1/connections/${connectionId}/sync`, auth)
      yield* send("getConnectionSync", 404, "GET", "/v1/connections/conn_00000000000000000000000000000000/sync", auth)
      const feed = `/v1/connections/${connectionId}/facilities/${facility.id}/changes`
      yield* send("listChanges", 200, "GET", `${feed}?limit=5`, auth)
      yield* send("listChanges", 400, "GET", `${feed}?cursor=notacursor`, auth)
      yield* send("listChanges", 400, "GET", `${feed}?types=widgets`, auth)
      yield* send("listChanges", 404, "GET", `/v1/connections/${connectionId}/facilities/fac_unknown/changes`, auth)

      // Every resource: a page, then one item by id (from the first facility that has one)
      const resources: ReadonlyArray<readonly [string, string, string]> = [
        ["packages", "listPackages", "getPackage"],
        ["plants", "listPlants", "getPlant"],
        ["harvests", "listHarvests", "getHarvest"],
        ["lab_results", "listLabResults", "getLabResult"],
        ["transfers", "listTransfers", "getTransfer"],
        ["sales", "listSales", "getSale"],
        ["sales_deliveries", "listSalesDeliveries", "getSalesDelivery"],
        ["items", "listItems", "getItem"],
        ["strains", "listStrains", "getStrain"],
        ["locations", "listLocations", "getLocation"],
        ["patients", "listPatients", "getPatient"]
      ]
      for (const [resource, listId, getId] of resources) {
        let found: { readonly base: string; readonly id: string } | undefined
        for (const f of facilities) {
          const base = `/v1/connections/${connectionId}/facilities/${f.id}/${resource}`
          const listed = yield* call("GET", `${base}?per_page=2`, auth)
          if (listed.status !== 200) continue
          problems.push(...validator.response(listId, 200, listed.body))
          answered.set(listId, (answered.get(listId) ?? new Set()).add(200))
          if (listed.body.data.length > 0) {
            found = { base, id: listed.body.data[0].id }
            break
          }
        }
        assert.isDefined(found, `no facility of the sandbox has ${resource}`)
        yield* send(getId, 200, "GET", `${found!.base}/${encodeURIComponent(found!.id)}`, auth)
        yield* send(getId, 404, "GET", `${found!.base}/unknown`, auth)
        yield* send(listId, 400, "GET", `${found!.base}?per_page=101`, auth)
      }
      // BioTrack has no sales deliveries: the capability is refused
      const biotrack = yield* linkSandbox(token, "provider_b")
      const biotrackFacility = (yield* call("GET", `/v1/connections/${biotrack.connection_id}/facilities`, auth)).body
        .data[0]
      yield* send(
        "listSalesDeliveries",
        403,
        "GET",
        `/v1/connections/${biotrack.connection_id}/facilities/${biotrackFacility.id}/sales_deliveries`,
        auth
      )

      // Writes
      const base = `/v1/connections/${connectionId}/facilities/${facility.id}`
      const pkg = (yield* call("GET", `${base}/packages?is_on_hold=false&per_page=1`, auth)).body.data[0]
      yield* send("getChainOfCustody", 200, "GET", `${base}/packages/${pkg.id}/chain_of_custody`, auth)
      yield* send("getChainOfCustody", 404, "GET", `${base}/packages/pkg_unknown/chain_of_custody`, auth)
      const split = {
        item_name: pkg.item_name,
        item_category: pkg.item_category,
        quantity: 1,
        unit_of_measure: pkg.unit_of_measure,
        source_package_ids: [pkg.id]
      }
      yield* send("createPackage", 201, "POST", `${base}/packages`, {
        ...auth,
        json: split,
        headers: { "idempotency-key": "split-1" }
      })
      yield* send("createPackage", 409, "POST", `${base}/packages`, {
        ...auth,
        json: { ...split, quantity: 2 },
        headers: { "idempotency-key": "split-1" }
      })
      yield* send("createPackage", 422, "POST", `${base}/packages`, {
        ...auth,
        json: { ...split, quantity: 1_000_000 }
      })
      yield* send("createPackage", 400, "POST", `${base}/packages`, { ...auth, json: { ...split, quantity: -1 } })
      yield* send("createPackage", 415, "POST", `${base}/packages`, { ...auth, raw: "x", contentType: "text/plain" })
      yield* send("createPackage", 413, "POST", `${base}/packages`, {
        ...auth,
        raw: JSON.stringify({ item_name: "x".repeat(1_100_000) })
      })
      const lab = facilities.find((f) => f.capabilities.includes("labs"))
      const labBase = `/v1/connections/${connectionId}/facilities/${lab.id}`
      const sample = (yield* call("GET", `${labBase}/packages?per_page=1`, auth)).body.data[0]
      const labResult = {
        package_id: sample.id,
        lab_name: lab.name,
        overall_passed: true,
        results: [{ name: "THC", category: "potency", value: 21.5, unit: "%", passed: true, notes: null }]
      }
      // at a grower's facility the world's lab records it (issue #29)
      yield* send("createLabResult", 201, "POST", `${base}/lab_results`, {
        ...auth,
        json: { ...labResult, package_id: pkg.id }
      })
      yield* send("createLabResult", 201, "POST", `${labBase}/lab_results`, { ...auth, json: labResult })
      const recipient = facilities.find((f) => f.id !== facility.id && !f.capabilities.includes("labs"))
      // what the package holds now: the split and the lab's sample each took from it
      const held = (yield* call("GET", `${base}/packages/${encodeURIComponent(pkg.id)}`, auth)).body.data
      const line = {
        package_id: pkg.id,
        tag: pkg.tag,
        item_name: pkg.item_name,
        quantity: held.quantity,
        unit_of_measure: pkg.unit_of_measure
      }
      const transfer = {
        transfer_type: "Wholesale",
        shipper_facility: facility.id,
        recipient_facility: recipient.license_number,
        packages: [line]
      }
      yield* send("createTransfer", 400, "POST", `${base}/transfers`, {
        ...auth,
        json: { ...transfer, recipient_facility: "No Such Facility" }
      })
      yield* send("createTransfer", 201, "POST", `${base}/transfers`, { ...auth, json: transfer })

      // The sandbox: scenarios, faults, reset
      const sandbox = `/v1/sandbox/${connectionId}`
      yield* send("createWebhook", 201, "POST", "/v1/webhooks", {
        ...auth,
        json: { url: "http://127.0.0.1:9/hook", events: ["transfer.arrived", "lab_result.received"] }
      })
      yield* send("simulateScenario", 200, "POST", `${sandbox}/simulate`, {
        ...auth,
        json: { scenario: "transfer_arrived" }
      })
      yield* send("simulateScenario", 400, "POST", `${sandbox}/simulate`, { ...auth, json: { scenario: "meteor" } })
      yield* send("simulateScenario", 404, "POST", "/v1/sandbox/conn_00000000000000000000000000000000/simulate", {
        ...auth,
        json: { scenario: "transfer_arrived" }
      })
      const faults: ReadonlyArray<readonly [Json["body"], number]> = [
        [{ kind: "outage" }, 503],
        [{ kind: "malformed" }, 502],
        [{ kind: "expired_login" }, 409]
      ]
      for (const [fault, status] of faults) {
        yield* send("setSandboxFault", 200, "PUT", `${sandbox}/faults`, { ...auth, json: fault })
        yield* send("getSandboxFault", 200, "GET", `${sandbox}/faults`, auth)
        yield* send("listPackages", status, "GET", `${base}/packages`, auth)
        yield* send("getPackage", status, "GET", `${base}/packages/${pkg.id}`, auth)
        yield* send("clearSandboxFault", 200, "DELETE", `${sandbox}/faults`, auth)
      }
      yield* send("setSandboxFault", 400, "PUT", `${sandbox}/faults`, { ...auth, json: { kind: "gremlins" } })
      yield* send("resetSandboxConnection", 200, "POST", `${sandbox}/reset`, auth)

      // Webhooks
      const hooks = yield* send("listWebhooks", 200, "GET", "/v1/webhooks", auth)
      const hook = hooks.data[0].id as string
      yield* send("listWebhooks", 403, "GET", "/v1/webhooks", { token: connectionToken })
      yield* send("getWebhook", 200, "GET", `/v1/webhooks/${hook}`, auth)
      yield* send("getWebhook", 404, "GET", "/v1/webhooks/wh_unknown", auth)
      yield* send("updateWebhook", 200, "PATCH", `/v1/webhooks/${hook}`, { ...auth, json: { description: "Store" } })
      yield* send("updateWebhook", 400, "PATCH", `/v1/webhooks/${hook}`, { ...auth, json: { events: [] } })
      yield* send("rotateWebhookSecret", 200, "POST", `/v1/webhooks/${hook}/rotate_secret`, auth)
      const deliveries = yield* send("listWebhookDeliveries", 200, "GET", `/v1/webhooks/${hook}/deliveries`, auth)
      assert.isAbove(deliveries.data.length, 0, "the scenario queued a delivery")
      yield* send(
        "retryWebhookDelivery",
        200,
        "POST",
        `/v1/webhooks/${hook}/deliveries/${deliveries.data[0].id}/retry`,
        auth
      )
      yield* send("retryWebhookDelivery", 404, "POST", `/v1/webhooks/${hook}/deliveries/dlv_unknown/retry`, auth)

      // Events
      const events = yield* send("listEvents", 200, "GET", "/v1/events?delivery_success=false", auth)
      assert.isAbove(events.data.length, 0, "the scenario's event is not delivered yet")
      yield* send("listEvents", 200, "GET", `/v1/events?connection_id=${connectionId}`, { token: connectionToken })
      yield* send("listEvents", 400, "GET", "/v1/events?type=transfer.lost", auth)
      yield* send("getEvent", 200, "GET", `/v1/events/${events.data[0].id}`, auth)
      // the stream never ends by itself: its head and first frame are read, then it is closed
      const opened = yield* Effect.scoped(Effect.gen(function*() {
        const client = yield* HttpClient.HttpClient
        const response = yield* client.execute(
          HttpClientRequest.get("/v1/events/stream").pipe(HttpClientRequest.bearerToken(auth.token))
        )
        const first = yield* response.stream.pipe(Stream.decodeText(), Stream.take(1), Stream.runCollect)
        return { status: response.status, type: response.headers["content-type"], text: Chunk.join(first, "") }
      }))
      assert.strictEqual(opened.status, 200)
      assert.strictEqual(opened.type, "text/event-stream")
      problems.push(...validator.response("streamEvents", opened.status, opened.text))
      answered.set("streamEvents", new Set([opened.status]))
      yield* send("streamEvents", 400, "GET", "/v1/events/stream?types=transfer.lost", auth)
      yield* send("getEvent", 404, "GET", "/v1/events/evt_unknown", auth)
      yield* send("deleteWebhook", 200, "DELETE", `/v1/webhooks/${hook}`, auth)
      yield* send("deleteWebhook", 404, "DELETE", `/v1/webhooks/${hook}`, auth)

      // Production: writes are refused, reads reach the (unconfigured) state system
      const production = yield* productionSignIn
      yield* insertProductionConnection(production.organisation.id, "conn_production_openapi")
      const live = `/v1/connections/conn_production_openapi/facilities/${facility.id}`
      yield* send("createPackage", 403, "POST", `${live}/packages`, { token: production.access, json: split })
      yield* send("listPackages", 503, "GET", `${live}/packages`, { token: production.access })

      // A disconnected connection
      yield* send("deleteConnection", 200, "DELETE", `/v1/connections/${connectionId}`, auth)
      yield* send("listFacilities", 409, "GET", `/v1/connections/${connectionId}/facilities`, auth)
      yield* send("deleteConnection", 404, "DELETE", "/v1/connections/conn_00000000000000000000000000000000", auth)

      assert.deepStrictEqual(problems, [])
      const missing = OpenApiValidator.operations(doc)
        .map((o) => o.op.operationId as string)
        .filter((id) => ![...(answered.get(id) ?? [])].some((status) => status < 300))
      assert.deepStrictEqual(missing, [], "every operation's happy path was checked")
    }).pipe(Effect.provide(TestApp)), { timeout: 120_000 })
})
