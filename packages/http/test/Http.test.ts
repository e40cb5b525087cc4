import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Api } from "@tracebridge/http"
import { Effect } from "effect"
import { TestApp as TestServer } from "./support/TestApp.js"

describe("Http", () => {
  it.effect("answers the health check through the typed client built from the contract", () =>
    Effect.gen(function*() {
      const client = yield* HttpApiClient.make(Api.Api)
      assert.deepStrictEqual(yield* client.system.health(), { status: "ok" })
    }).pipe(Effect.provide(TestServer)))

  it.effect("serves the OpenAPI 3.1 document generated from the contract", () =>
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const response = yield* client.execute(HttpClientRequest.get("/v1/openapi.json"))
      assert.strictEqual(response.status, 200)
      const doc = (yield* response.json) as { openapi: string; info: { version: string; title: string }; paths: object }
      assert.strictEqual(doc.openapi, "3.1.0")
      assert.strictEqual(doc.info.version, "0.1.0")
      assert.strictEqual(doc.info.title, "Tracebridge API")
      assert.property(doc.paths, "/healthz")
    }).pipe(Effect.provide(TestServer)))

  it.effect("serves the docs page without loading anything from outside", () =>
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const response = yield* client.execute(HttpClientRequest.get("/docs"))
      assert.strictEqual(response.status, 200)
      const html = yield* response.text
      assert.include(html, "Tracebridge API reference")
      assert.notMatch(html, /<script[^>]+src="https?:\/\//)
      assert.notMatch(html, /<link[^>]+href="https?:\/\//)
    }).pipe(Effect.provide(TestServer)))
})
