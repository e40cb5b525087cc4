/**
 * The served OpenAPI document declares the middleware's headers (Idempotency-Key, RateLimit-*,
 * Retry-After, X-Request-Id, Idempotent-Replayed), and real answers carry what it declares.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"

type Json = Record<string, any>

const operations = (spec: Json) =>
  Object.entries<Json>(spec.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item).filter(([, op]) => typeof op === "object" && op.responses !== undefined).map((
      [method, op]
    ) => ({ path, method, op }))
  )

const declaredHeaders = (response: Json): Array<string> => Object.keys(response.headers ?? {})

describe("OpenApiHeaders", () => {
  it.effect("declares Idempotency-Key on every authenticated POST and on nothing else", () =>
    Effect.gen(function*() {
      const spec = (yield* call("GET", "/v1/openapi.json")).body
      assert.deepStrictEqual(spec.components.parameters.IdempotencyKey.name, "Idempotency-Key")
      assert.strictEqual(spec.components.parameters.IdempotencyKey.in, "header")
      let posts = 0
      for (const { method, op, path } of operations(spec)) {
        const refs = (op.parameters ?? []).map((p: Json) => p.$ref)
        const expected = method === "post" && op.security.length > 0
        if (expected) posts++
        assert.strictEqual(
          refs.includes("#/components/parameters/IdempotencyKey"),
          expected,
          `${method.toUpperCase()} ${path}`
        )
      }
      assert.isAtLeast(posts, 10)
    }).pipe(Effect.provide(TestApp)))

  it.effect("declares RateLimit-* and X-Request-Id on every answer, Retry-After on 429, 503 and 504", () =>
    Effect.gen(function*() {
      const spec = (yield* call("GET", "/v1/openapi.json")).body
      for (const name of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Retry-After", "X-Request-Id"]) {
        assert.isDefined(spec.components.headers[name], name)
      }
      for (const { method, op, path } of operations(spec)) {
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          const names = declaredHeaders(response)
          const where = `${method.toUpperCase()} ${path} ${status}`
          for (const name of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "X-Request-Id"]) {
            assert.include(names, name, where)
          }
          assert.strictEqual(
            names.includes("Retry-After"),
            status === "429" || status === "503" || status === "504",
            where
          )
        }
      }
    }).pipe(Effect.provide(TestApp)))

  it.effect("real answers carry the headers their operation declares", () =>
    Effect.gen(function*() {
      const spec = (yield* call("GET", "/v1/openapi.json")).body
      const { access } = yield* signIn
      const { connection_id } = yield* linkSandbox(access)
      const facilities = yield* call("GET", `/v1/connections/${connection_id}/facilities`, { token: access })
      assert.strictEqual(facilities.status, 200)
      const declared = declaredHeaders(spec.paths["/v1/connections/{connection_id}/facilities"].get.responses["200"])
      for (const name of declared) assert.isDefined(facilities.headers[name.toLowerCase()], name)

      const client = yield* HttpClient.HttpClient
      const send = Effect.flatMap(
        client.execute(
          HttpClientRequest.post("/v1/webhooks").pipe(
            HttpClientRequest.bearerToken(access),
            HttpClientRequest.setHeader("Idempotency-Key", "openapi-headers-1"),
            HttpClientRequest.bodyUnsafeJson({ url: "https://example.com/hooks", events: ["transfer.arrived"] })
          )
        ),
        (response) => Effect.as(response.text, response)
      ).pipe(Effect.scoped)
      const first = yield* send
      const replay = yield* send
      assert.strictEqual(first.status, 201)
      assert.strictEqual(replay.headers["idempotent-replayed"], "true")
      const postDeclared = declaredHeaders(spec.paths["/v1/webhooks"].post.responses["201"])
      assert.include(postDeclared, "Idempotent-Replayed")
      for (const name of postDeclared) assert.isDefined(replay.headers[name.toLowerCase()], name)
    }).pipe(Effect.provide(TestApp)))
})
