/**
 * The served OpenAPI document as a generator reads it (DECISIONS "OpenAPI"): every operation has a
 * summary, a description and an `operationId` a person would write; paging is integer; the OAuth2
 * client-credentials flow is a security scheme; `servers` is set; the widget's routes are left out.
 */
import { assert, describe, it } from "@effect/vitest"
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
  it.effect("names, summarises and describes every operation, and leaves out the widget's routes", () =>
    Effect.gen(function*() {
      const doc = (yield* call("GET", "/v1/openapi.json")).body as Json
      const ops = operations(doc)
      assert.isAtLeast(ops.length, 50)
      for (const { method, op, path } of ops) {
        const where = `${method.toUpperCase()} ${path}`
        assert.match(op.operationId, /^[a-z][A-Za-z]+$/, where)
        assert.isString(op.summary, `${where} has no summary`)
        assert.isAbove(String(op.description ?? "").length, 10, `${where} has no description`)
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
})
