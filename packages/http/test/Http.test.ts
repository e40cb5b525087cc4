import { HttpApiClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Api } from "@tracebridge/api"
import { ConfigProvider, Effect, Layer } from "effect"
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
      assert.property(doc.paths, "/v1/providers")
      // health is for operators, outside the /v1 document (DECISIONS "Turn 3 additions")
      for (const path of ["/healthz", "/livez", "/readyz"]) assert.notProperty(doc.paths, path)
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

  it.effect("GET / sends a person to the docs", () =>
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const response = yield* client.execute(HttpClientRequest.get("/"))
      assert.strictEqual(response.status, 302)
      assert.strictEqual(response.headers.location, "/docs")
    }).pipe(Effect.provide(TestServer)))

  it.effect("a method a path does not take answers 405 with Allow, in the error shape; an unknown path 404", () =>
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const send = (request: HttpClientRequest.HttpClientRequest) =>
        Effect.flatMap(client.execute(request), (r) => Effect.map(r.json, (body: any) => ({ r, body })))
      const webhooks = yield* send(HttpClientRequest.del("/v1/webhooks"))
      assert.strictEqual(webhooks.r.status, 405)
      assert.strictEqual(webhooks.r.headers.allow, "GET, POST")
      assert.strictEqual(webhooks.body.error.type, "invalid_request_error")
      assert.strictEqual(webhooks.body.error.code, "method_not_allowed")
      assert.include(webhooks.body.error.message, "GET, POST")
      assert.strictEqual(webhooks.body.error.request_id, webhooks.r.headers["x-request-id"])
      const connection = yield* send(HttpClientRequest.put("/v1/connections/conn_0123"))
      assert.strictEqual(connection.r.status, 405)
      assert.strictEqual(connection.r.headers.allow, "GET, DELETE")
      const unknown = yield* send(HttpClientRequest.get("/v1/nothing-here"))
      assert.strictEqual(unknown.r.status, 404)
      assert.strictEqual(unknown.body.error.code, "resource_not_found")
    }).pipe(Effect.provide(TestServer)))

  it.effect("the document's server and the docs page name the origin the request reached, not port 4000", () =>
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const doc = (yield* Effect.flatMap(client.execute(HttpClientRequest.get("/v1/openapi.json")), (r) => r.json)) as {
        servers: Array<{ url: string }>
      }
      const server = yield* HttpServer.HttpServer
      const port = (server.address as { port: number }).port
      assert.strictEqual(doc.servers[0]!.url, `http://127.0.0.1:${port}`)
      const proxied = (yield* Effect.flatMap(
        client.execute(
          HttpClientRequest.get("/v1/openapi.json").pipe(
            HttpClientRequest.setHeaders({ host: "api.example.test:8443", "x-forwarded-proto": "https" })
          )
        ),
        (r) => r.json
      )) as { servers: Array<{ url: string }> }
      assert.strictEqual(proxied.servers[0]!.url, "https://api.example.test:8443")
      const page = yield* Effect.flatMap(client.execute(HttpClientRequest.get("/docs")), (r) => r.text)
      assert.include(page, `server <code>http://127.0.0.1:${port}</code>`)
      assert.include(page, `<code>API=http://127.0.0.1:${port}</code>`)
      assert.notInclude(page, "server <code>http://127.0.0.1:4000")
      assert.notInclude(page, "API=http://127.0.0.1:4000")
    }).pipe(Effect.provide(TestServer)))

  it.effect("TRACEBRIDGE_PUBLIC_URL names the server, whatever the request's host", () =>
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const doc = (yield* Effect.flatMap(client.execute(HttpClientRequest.get("/v1/openapi.json")), (r) => r.json)) as {
        servers: Array<{ url: string }>
      }
      assert.strictEqual(doc.servers[0]!.url, "https://tracebridge.example.com")
    }).pipe(
      Effect.provide(TestServer),
      Effect.provide(
        Layer.setConfigProvider(ConfigProvider.fromJson({ TRACEBRIDGE_PUBLIC_URL: "https://tracebridge.example.com/" }))
      )
    ))
})
