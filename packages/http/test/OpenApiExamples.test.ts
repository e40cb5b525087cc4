/**
 * The OpenAPI examples (`OpenApiExamples`): every operation of the served document has a success
 * example, and a request example when it takes a JSON body; each is valid against the document's own
 * schema for that operation, so that an operation added without an example, or an example that drifts
 * from its schema, fails here.
 */
import { assert, describe, it } from "@effect/vitest"
import { OpenApiExamples } from "@tracebridge/api"
import { Effect } from "effect"
import { make, operations } from "./support/OpenApiValidator.js"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"

type Json = Record<string, any>

const { requests, responses } = OpenApiExamples

const served = Effect.map(call("GET", "/v1/openapi.json"), (answer) => answer.body as Json)

/** The operation's documented success status with a body (its 200 or 201; JSON, or the event stream's text). */
const successStatus = (op: Json): number => {
  const statuses = Object.keys(op.responses ?? {}).filter((s) =>
    /^2\d\d$/.test(s) && Object.keys(op.responses[s].content ?? {}).length > 0
  )
  if (statuses.length !== 1) {
    throw new Error(`${op.operationId} documents ${statuses.length} success answers with a body`)
  }
  return Number(statuses[0])
}

/** The field names of a body's `meta`, `pagination` and `data` (its first item, on a list). */
const shape = (body: Json) => {
  const data = Array.isArray(body.data) ? body.data[0] : body.data
  return {
    meta: Object.keys(body.meta ?? {}).sort(),
    pagination: Object.keys(body.pagination ?? {}).sort(),
    data: typeof data === "object" && data !== null ? Object.keys(data).sort() : []
  }
}

const takesJson = (op: Json) => op.requestBody?.content?.["application/json"]?.schema !== undefined

describe("OpenAPI examples", () => {
  it.effect("every operation has a success example that its documented schema accepts", () =>
    Effect.gen(function*() {
      const doc = yield* served
      const validator = make(doc)
      const ops = operations(doc)
      assert.isAtLeast(ops.length, 49)
      const problems = ops.flatMap(({ op }) => {
        const id = op.operationId as string
        if (!(id in responses)) return [`${id} has no response example`]
        return validator.response(id, successStatus(op), responses[id])
      })
      assert.deepStrictEqual(problems, [])
    }).pipe(Effect.provide(TestApp)))

  it.effect("every operation with a JSON body has a request example that its documented schema accepts", () =>
    Effect.gen(function*() {
      const doc = yield* served
      const validator = make(doc)
      const problems = operations(doc).filter(({ op }) => takesJson(op)).flatMap(({ op }) => {
        const id = op.operationId as string
        if (!(id in requests)) return [`${id} has no request example`]
        return validator.request(id, requests[id])
      })
      assert.deepStrictEqual(problems, [])
    }).pipe(Effect.provide(TestApp)))

  it.effect("has no example for an operation the document does not have, or one that takes no body", () =>
    Effect.gen(function*() {
      const ops = operations(yield* served)
      const ids = new Set(ops.map(({ op }) => op.operationId as string))
      const withBody = new Set(ops.filter(({ op }) => takesJson(op)).map(({ op }) => op.operationId as string))
      assert.deepStrictEqual(Object.keys(responses).filter((id) => !ids.has(id)), [])
      assert.deepStrictEqual(Object.keys(requests).filter((id) => !withBody.has(id)), [])
    }).pipe(Effect.provide(TestApp)))

  it.effect("fails an example that drifts from its schema", () =>
    Effect.gen(function*() {
      const validator = make(yield* served)
      const example = responses.getConnection as Json
      assert.isNotEmpty(
        validator.response("getConnection", 200, { ...example, data: { ...example.data, status: "on" } })
      )
      assert.isNotEmpty(validator.response("getConnection", 200, { data: example.data }))
      const withoutId = Object.fromEntries(Object.entries(example.data).filter(([key]) => key !== "id"))
      assert.isNotEmpty(validator.response("getConnection", 200, { ...example, data: withoutId }))
      assert.isNotEmpty(validator.request("createPackage", { ...(requests.createPackage as Json), quantity: -1 }))
    }).pipe(Effect.provide(TestApp)))

  it.effect("has the fields of the sandbox's real answers, envelope included", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      const { connection_id } = yield* linkSandbox(access)
      const get = (path: string) => Effect.map(call("GET", path, { token: access }), (answer) => answer.body as Json)
      const real: Record<string, Json> = {
        listProviders: yield* get("/v1/providers"),
        listConnections: yield* get("/v1/connections"),
        getConnection: yield* get(`/v1/connections/${connection_id}`),
        listFacilities: yield* get(`/v1/connections/${connection_id}/facilities`),
        getSandboxFault: yield* get(`/v1/sandbox/${connection_id}/faults`),
        createLinkToken:
          (yield* call("POST", "/v1/link/token/create", { token: access, json: requests.createLinkToken }))
            .body
      }
      const facilities = real.listFacilities!.data as ReadonlyArray<Json>
      real.getFacility = yield* get(`/v1/connections/${connection_id}/facilities/${facilities[0]!.id}`)
      const resources = {
        packages: ["listPackages", "getPackage"],
        plants: ["listPlants", "getPlant"],
        harvests: ["listHarvests", "getHarvest"],
        lab_results: ["listLabResults", "getLabResult"],
        transfers: ["listTransfers", "getTransfer"],
        sales: ["listSales", "getSale"],
        sales_deliveries: ["listSalesDeliveries", "getSalesDelivery"],
        items: ["listItems", "getItem"],
        strains: ["listStrains", "getStrain"],
        locations: ["listLocations", "getLocation"],
        patients: ["listPatients", "getPatient"]
      } as const
      for (const [path, [listId, getId]] of Object.entries(resources)) {
        for (const facility of facilities) {
          const base = `/v1/connections/${connection_id}/facilities/${facility.id}/${path}`
          const page = yield* get(`${base}?per_page=1`)
          if (page.data?.length !== 1) continue
          real[listId] = page
          real[getId] = yield* get(`${base}/${page.data[0].id}`)
          if (path === "packages") real.getChainOfCustody = yield* get(`${base}/${page.data[0].id}/chain_of_custody`)
          break
        }
      }
      for (const [id, body] of Object.entries(real)) {
        assert.deepStrictEqual(shape(responses[id] as Json), shape(body), id)
      }
      assert.strictEqual(Object.keys(real).length, 30, "every resource has a row in the sandbox")
    }).pipe(Effect.provide(TestApp)))
})
