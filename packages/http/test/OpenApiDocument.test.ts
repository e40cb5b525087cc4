/**
 * The served OpenAPI document as a generator reads it (DECISIONS "OpenAPI"): every operation has a
 * summary, a description and an `operationId` a person would write; paging is integer; the OAuth2
 * client-credentials flow is a security scheme; `servers` is set; the widget's routes are left out.
 */
import { assert, describe, it } from "@effect/vitest"
import { Errors } from "@tracebridge/http"
import { Scenario } from "@tracebridge/sandbox"
import { Effect } from "effect"
import { call, TestApp } from "./support/TestApp.js"

type Json = Record<string, any>

const operations = (doc: Json) =>
  Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item)
      .filter(([, op]) => typeof op === "object" && op !== null && typeof op.operationId === "string")
      .map(([method, op]) => ({ path, method, op }))
  )

describe("OpenAPI document", () => {
  it.effect("names, summarises, describes and illustrates every operation, and leaves out the widget's routes", () =>
    Effect.gen(function*() {
      const doc = (yield* call("GET", "/v1/openapi.json")).body as Json
      const ops = operations(doc)
      assert.isAtLeast(ops.length, 50)
      for (const { method, op, path } of ops) {
        const where = `${method.toUpperCase()} ${path}`
        assert.match(op.operationId, /^[a-z][A-Za-z]+$/, where)
        assert.isString(op.summary, `${where} has no summary`)
        assert.isAbove(String(op.description ?? "").length, 10, `${where} has no description`)
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          if (status.startsWith("2")) {
            const media = response.content["application/json"] ?? Object.values<Json>(response.content)[0]
            assert.isDefined(media.example, `${where} ${status} has no example`)
          }
        }
        if (op.requestBody !== undefined) {
          assert.isDefined(op.requestBody.content["application/json"].example, `${where}'s body has no example`)
        }
      }
      const ids = ops.map((o) => o.op.operationId)
      assert.strictEqual(new Set(ids).size, ids.length, "operationIds are unique")
      for (const id of ["createToken", "listPackages", "getPackage", "createTransfer", "simulateScenario"]) {
        assert.include(ids, id)
      }
      assert.isFalse(Object.keys(doc.paths).some((p) => p.startsWith("/connect")), "widget routes are not public API")
      assert.isAtLeast(doc.servers.length, 1)
    }).pipe(Effect.provide(TestApp)))

  it.effect("pages with integers and offers the OAuth2 client-credentials flow", () =>
    Effect.gen(function*() {
      const doc = (yield* call("GET", "/v1/openapi.json")).body as Json
      const listPackages = operations(doc).find((o) => o.op.operationId === "listPackages")!.op
      const param = (name: string) => listPackages.parameters.find((p: Json) => p.name === name && p.in === "query")
      assert.deepInclude(param("page").schema, { type: "integer", minimum: 1 })
      assert.deepInclude(param("per_page").schema, { type: "integer", minimum: 1, maximum: 100 })
      // every paged answer's operation takes the page rules
      const paged = operations(doc).filter(({ op }) =>
        op.responses["200"]?.content["application/json"]?.example.pagination !== undefined
      )
      assert.includeMembers(paged.map(({ op }) => op.operationId), [
        "listConnections",
        "listFacilities",
        "listWebhooks",
        "listWebhookDeliveries",
        "listPackages"
      ])
      for (const { op } of paged) {
        const query = (op.parameters as Array<Json>).filter((p) => p.in === "query").map((p) => p.name)
        assert.includeMembers(query, ["page", "per_page"], `${op.operationId} takes page and per_page`)
      }
      const flow = doc.components.securitySchemes.oauth2.flows.clientCredentials
      assert.strictEqual(flow.tokenUrl, "/v1/oauth/token")
      assert.deepStrictEqual(Object.keys(flow.scopes).sort(), ["production", "sandbox"])
      assert.deepInclude(listPackages.security, { oauth2: [] })
    }).pipe(Effect.provide(TestApp)))

  it.effect("documents the token request for both grants, as JSON and as a form", () =>
    Effect.gen(function*() {
      const doc = (yield* call("GET", "/v1/openapi.json")).body as Json
      const token = operations(doc).find((o) => o.op.operationId === "createToken")!.op
      assert.deepStrictEqual(
        Object.keys(token.requestBody.content).sort(),
        ["application/json", "application/x-www-form-urlencoded"]
      )
      const refs = token.requestBody.content["application/x-www-form-urlencoded"].schema.oneOf.map((r: Json) => r.$ref)
      assert.deepStrictEqual(refs, [
        "#/components/schemas/ClientCredentialsGrant",
        "#/components/schemas/RefreshTokenGrant"
      ])
      const grants = refs.map((ref: string) => doc.components.schemas[ref.split("/").pop()!])
      assert.deepStrictEqual(grants.map((g: Json) => g.properties.grant_type.enum[0]), [
        "client_credentials",
        "refresh_token"
      ])
      assert.deepStrictEqual(grants[0].required, ["grant_type", "client_id", "client_secret"])
      assert.deepStrictEqual(grants[1].required, ["grant_type", "refresh_token"])
      // and the documented example is a body the endpoint accepts
      const example = token.requestBody.content["application/json"].example
      assert.strictEqual(example.grant_type, "client_credentials")
    }).pipe(Effect.provide(TestApp)))

  it.effect("documents each operation's own errors, in the envelope, with every code", () =>
    Effect.gen(function*() {
      const doc = (yield* call("GET", "/v1/openapi.json")).body as Json
      const byId = new Map(operations(doc).map((o) => [o.op.operationId as string, o.op]))
      const statuses = (id: string) => Object.keys(byId.get(id)!.responses)
      assert.deepStrictEqual(statuses("listProviders"), ["200", "401", "429", "500", "503"])
      assert.deepStrictEqual(statuses("createToken"), ["200", "400", "401", "403", "413", "415", "429", "500", "503"])
      assert.includeMembers(statuses("createPackage"), ["201", "400", "403", "404", "409", "413", "415", "422", "503"])
      assert.notInclude(statuses("getPackage"), "422", "a read refuses no write")
      assert.notInclude(statuses("listWebhooks"), "502", "webhooks never reach a state system")
      // the framework's decode error is never sent, so never documented
      assert.notInclude(JSON.stringify(doc), "HttpApiDecodeError")
      const schemaAt = (id: string, status: string) =>
        byId.get(id)!.responses[status].content["application/json"].schema.$ref.split("/").pop()
      assert.strictEqual(schemaAt("listPackages", "400"), "ValidationError")
      assert.strictEqual(schemaAt("createToken", "400"), "OAuthBadRequest")
      // 503: our database (every operation), or the state system too where one is reached
      assert.strictEqual(schemaAt("listWebhooks", "503"), "ServiceUnavailableError")
      assert.deepStrictEqual(
        byId.get("getPackage")!.responses["503"].content["application/json"].schema.anyOf.map((s: Json) =>
          s.$ref.split("/").pop()
        ),
        ["ProviderUnavailableError", "ServiceUnavailableError"]
      )
      const codesOf = (name: string) => doc.components.schemas[name].properties.error.properties.code.enum
      for (const [type, codes] of Object.entries(Errors.codes)) {
        const name = {
          validation_error: "ValidationError",
          authentication_error: "AuthenticationError",
          permission_error: "PermissionError",
          not_found_error: "NotFoundError",
          conflict_error: "ConflictError",
          invalid_request_error: "UnprocessableError",
          rate_limit_error: "RateLimitError",
          api_error: ["InternalError", "ServiceUnavailableError"]
        }[type]!
        assert.deepStrictEqual([name].flat().flatMap(codesOf), [...codes], type)
      }
      assert.includeMembers(codesOf("ConflictError"), ["connection_inactive", "write_conflict"])
    }).pipe(Effect.provide(TestApp)))

  it.effect("enumerates every closed set", () =>
    Effect.gen(function*() {
      const doc = (yield* call("GET", "/v1/openapi.json")).body as Json
      const schemas = doc.components.schemas
      assert.deepStrictEqual(schemas.Facility.properties.capabilities.items, {
        $ref: "#/components/schemas/CapabilityTag"
      })
      assert.include(schemas.CapabilityTag.enum, "sales_deliveries")
      assert.deepStrictEqual(schemas.Simulate.properties.scenario.enum, [...Scenario.names])
      assert.deepStrictEqual(schemas.PublicTokenExchanged.properties.status, {
        $ref: "#/components/schemas/ConnectionStatus"
      })
      assert.deepStrictEqual(schemas.WebhookDelivery.properties.event_type, { $ref: "#/components/schemas/EventType" })
      assert.deepStrictEqual(schemas.ConnectionStatus.enum, ["active", "inactive", "error", "pending"])
      assert.deepStrictEqual(schemas.TransferStatus.enum, ["pending", "in_transit", "received", "rejected"])
      assert.deepStrictEqual(schemas.GrowthPhase.enum, ["clone", "vegetative", "flowering"])
    }).pipe(Effect.provide(TestApp)))
})
