/**
 * Input limits (413, 415, over-long strings, deep nesting) and the per-client rate limit (headers,
 * 429 with Retry-After, refill on the TestClock, one bucket per client). Every refusal is in the
 * error envelope and writes nothing.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Http, Limits, RateLimit } from "@tracebridge/http"
import { Chunk, Effect, Layer, Stream, TestClock } from "effect"
import * as Crypto from "../src/services/Crypto.js"
import type { Json } from "./support/TestApp.js"
import { call, otherOrganisation, signIn } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

const app = (settings: Partial<RateLimit.Settings> = {}) =>
  Http.makeHttpLive({ worker: false, rateLimiter: RateLimit.layerWith(settings) }).pipe(
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.layer)
  )

const assertEnvelope = (response: Json, status: number, type: string, code: string) => {
  assert.strictEqual(response.status, status)
  assert.strictEqual(response.body.error.type, type)
  assert.strictEqual(response.body.error.code, code)
  assert.isString(response.body.error.message)
  assert.strictEqual(response.body.error.request_id, response.headers["x-request-id"])
}

/** No webhook was created: the refused POSTs wrote nothing. */
const assertNoWebhooks = (access: string) =>
  Effect.gen(function*() {
    const listed = yield* call("GET", "/v1/webhooks", { token: access })
    assert.strictEqual(listed.status, 200)
    assert.strictEqual(listed.body.pagination.total, 0)
  })

const send = (request: HttpClientRequest.HttpClientRequest) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(request)
    const text = yield* response.text
    return { status: response.status, headers: response.headers, body: text === "" ? null : JSON.parse(text) } as Json
  }).pipe(Effect.scoped)

const hook = { url: "https://hooks.example.com/tracebridge" }

describe("Input limits", () => {
  it.effect("a Content-Length over 1 MiB is a 413 payload_too_large, before the body is read", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const big = JSON.stringify({ ...hook, description: "x".repeat(Limits.MAX_BODY_BYTES) })
      const refused = yield* call("POST", "/v1/webhooks/", { token: me.access, raw: big })
      assertEnvelope(refused, 413, "invalid_request_error", "payload_too_large")
      yield* assertNoWebhooks(me.access)
    }).pipe(Effect.provide(app())))

  it.effect("a chunked body is counted as it streams and refused past 1 MiB", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const chunk = new TextEncoder().encode(" ".repeat(64 * 1024))
      const body = Stream.fromChunk(Chunk.makeBy(20, () => chunk)) // 1.25 MiB of whitespace
      const refused = yield* send(
        HttpClientRequest.post("/v1/webhooks/").pipe(
          HttpClientRequest.bearerToken(me.access),
          HttpClientRequest.bodyStream(body, { contentType: "application/json" })
        )
      )
      assertEnvelope(refused, 413, "invalid_request_error", "payload_too_large")
    }).pipe(Effect.provide(app())))

  it.effect("a body of the wrong content type is a 415 unsupported_media_type; the token endpoint still takes a form", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const refused = yield* call("POST", "/v1/webhooks/", {
        token: me.access,
        raw: JSON.stringify(hook),
        contentType: "text/plain"
      })
      assertEnvelope(refused, 415, "invalid_request_error", "unsupported_media_type")
      const form = yield* call("POST", "/v1/webhooks/", {
        token: me.access,
        form: { url: hook.url }
      })
      assertEnvelope(form, 415, "invalid_request_error", "unsupported_media_type")
      yield* assertNoWebhooks(me.access)
      const token = yield* call("POST", "/v1/oauth/token", {
        form: { grant_type: "client_credentials", client_id: me.client_id, client_secret: me.client_secret }
      })
      assert.strictEqual(token.status, 200)
      assert.isString(token.body.access_token)
    }).pipe(Effect.provide(app())))

  it.effect("the token endpoint answers 400/401/403 in RFC 6749 form (also for long or deep JSON), 413/415 in the envelope", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const wrongType = yield* call("POST", "/v1/oauth/token", { raw: "grant_type=x", contentType: "text/plain" })
      assertEnvelope(wrongType, 415, "invalid_request_error", "unsupported_media_type")
      const huge = yield* call("POST", "/v1/oauth/token", {
        json: { grant_type: "client_credentials", client_id: "x".repeat(Limits.MAX_BODY_BYTES) }
      })
      assertEnvelope(huge, 413, "invalid_request_error", "payload_too_large")
      const badSecret = yield* call("POST", "/v1/oauth/token", {
        json: { grant_type: "client_credentials", client_id: me.client_id, client_secret: "tb_secret_wrong" }
      })
      assert.strictEqual(badSecret.status, 401)
      assert.strictEqual(badSecret.body.error, "invalid_client")
      const long = yield* call("POST", "/v1/oauth/token", {
        json: { grant_type: "client_credentials", client_id: "x".repeat(Limits.MAX_STRING_LENGTH + 1) }
      })
      assert.strictEqual(long.status, 400)
      assert.strictEqual(long.body.error, "invalid_request")
      assert.include(long.body.error_description, "client_id")
      const deep = yield* call("POST", "/v1/oauth/token", { raw: "[".repeat(40) + "]".repeat(40) })
      assert.deepStrictEqual([deep.status, deep.body.error], [400, "invalid_request"])
    }).pipe(Effect.provide(app())))

  it.effect("a string over 10 000 characters is a 400 invalid_parameter naming it", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const refused = yield* call("POST", "/v1/link/token/create", {
        token: me.access,
        json: { external_id: "store-1", metadata: { note: "é".repeat(Limits.MAX_STRING_LENGTH + 1) } }
      })
      assertEnvelope(refused, 400, "validation_error", "invalid_parameter")
      assert.strictEqual(refused.body.error.param, "metadata.note")
      const hookRefused = yield* call("POST", "/v1/webhooks/", {
        token: me.access,
        json: { url: `https://hooks.example.com/${"a".repeat(Limits.MAX_STRING_LENGTH + 1)}` }
      })
      assertEnvelope(hookRefused, 400, "validation_error", "invalid_parameter")
      assert.strictEqual(hookRefused.body.error.param, "url")
      yield* assertNoWebhooks(me.access)
    }).pipe(Effect.provide(app())))

  it.effect("JSON nested deeper than 32 levels is a 400 invalid_json", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      let deep: unknown = "leaf"
      for (let i = 0; i < 40; i++) deep = { a: deep }
      const refused = yield* call("POST", "/v1/webhooks/", { token: me.access, json: { ...hook, metadata: deep } })
      assertEnvelope(refused, 400, "validation_error", "invalid_json")
      const arrays = yield* call("POST", "/v1/webhooks/", {
        token: me.access,
        raw: `{"url":"${hook.url}","x":${"[".repeat(10_000)}${"]".repeat(10_000)}}`
      })
      assertEnvelope(arrays, 400, "validation_error", "invalid_json")
      yield* assertNoWebhooks(me.access)
    }).pipe(Effect.provide(app())))

  it("scanJson measures strings with escapes as characters and ignores brackets inside strings", () => {
    assert.isUndefined(Limits.scanJson(`{"a":"${"\\u00e9".repeat(10)}"}`, { maxDepth: 2, maxString: 10 }))
    assert.deepStrictEqual(Limits.scanJson(`{"a":"${"\\n".repeat(11)}"}`, { maxDepth: 2, maxString: 10 }), {
      _tag: "StringTooLong",
      path: "a"
    })
    assert.deepStrictEqual(Limits.scanJson(`{"a":[1,{"b":"${"x".repeat(11)}"}]}`, { maxDepth: 5, maxString: 10 }), {
      _tag: "StringTooLong",
      path: "a.1.b"
    })
    assert.isUndefined(Limits.scanJson(`{"a":"[[[[[[{{{{"}`, { maxDepth: 2, maxString: 100 }))
    assert.deepStrictEqual(Limits.scanJson(`[[[1]]]`, { maxDepth: 2, maxString: 100 }), { _tag: "TooDeep" })
  })
})

describe("Rate limit", () => {
  it.effect("every response carries RateLimit-Limit, -Remaining (decreasing) and -Reset, errors too", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const first = yield* call("GET", "/v1/webhooks", { token: me.access })
      const second = yield* call("GET", "/v1/nowhere", { token: me.access })
      assert.strictEqual(first.headers["ratelimit-limit"], "10")
      assert.strictEqual(first.headers["ratelimit-remaining"], "9")
      assert.strictEqual(second.status, 404)
      assert.strictEqual(second.headers["ratelimit-limit"], "10")
      assert.strictEqual(second.headers["ratelimit-remaining"], "8")
      assert.strictEqual(second.headers["ratelimit-reset"], "2")
      const unauthenticated = yield* call("GET", "/v1/webhooks")
      assert.strictEqual(unauthenticated.status, 401)
      assert.isDefined(unauthenticated.headers["ratelimit-remaining"])
    }).pipe(Effect.provide(app({ burst: 10, rate: 1 }))))

  it.effect("an empty bucket is a 429 rate_limited with Retry-After; it refills as the clock advances", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      for (let i = 0; i < 3; i++) {
        const ok = yield* call("GET", "/v1/webhooks", { token: me.access })
        assert.strictEqual(ok.status, 200)
      }
      const refused = yield* call("GET", "/v1/webhooks", { token: me.access })
      assertEnvelope(refused, 429, "rate_limit_error", "rate_limited")
      assert.strictEqual(refused.headers["retry-after"], "2")
      assert.strictEqual(refused.headers["ratelimit-remaining"], "0")
      const posted = yield* call("POST", "/v1/webhooks/", { token: me.access, json: hook })
      assert.strictEqual(posted.status, 429)
      yield* TestClock.adjust("2 seconds")
      const again = yield* call("GET", "/v1/webhooks", { token: me.access })
      assert.strictEqual(again.status, 200)
      assert.strictEqual(again.body.pagination.total, 0)
      assert.strictEqual(again.headers["ratelimit-remaining"], "0")
    }).pipe(Effect.provide(app({ burst: 3, rate: 0.5 }))))

  it.effect("two clients do not share a bucket", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const other = yield* otherOrganisation
      yield* call("GET", "/v1/webhooks", { token: me.access })
      yield* call("GET", "/v1/webhooks", { token: me.access })
      const mine = yield* call("GET", "/v1/webhooks", { token: me.access })
      assert.strictEqual(mine.status, 429)
      const theirs = yield* call("GET", "/v1/webhooks", { token: other })
      assert.strictEqual(theirs.status, 200)
      assert.strictEqual(theirs.headers["ratelimit-remaining"], "1")
    }).pipe(Effect.provide(app({ burst: 2, rate: 0.001 }))))
})
