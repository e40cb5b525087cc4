/**
 * Idempotency-Key: a replay is byte for byte and creates nothing new; another body is 409
 * `idempotency_key_reused`; two concurrent requests execute once; keys expire after 24 h on the
 * TestClock; malformed keys are 400; 5xx answers are not stored; stored bodies are encrypted.
 */
import { HttpClient, HttpClientRequest, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Http, Idempotency, RateLimit } from "@tracebridge/http"
import { Deferred, Effect, Fiber, Layer, Option, Ref, TestClock } from "effect"
import { IdempotencyStore } from "../src/persistence/IdempotencyStore.js"
import * as Crypto from "../src/services/Crypto.js"
import { call, signIn } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

const app = Http.makeHttpLive({ worker: false, rateLimiter: RateLimit.layerWith({ enabled: false }) }).pipe(
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

interface Raw {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
}

const post = (path: string, token: string, body: string, key?: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.post(path).pipe(
      HttpClientRequest.bearerToken(token),
      HttpClientRequest.bodyText(body, "application/json")
    )
    if (key !== undefined) request = HttpClientRequest.setHeader(request, "Idempotency-Key", key)
    const response = yield* client.execute(request)
    return { status: response.status, headers: response.headers, text: yield* response.text } as Raw
  }).pipe(Effect.scoped)

const sandboxBody = JSON.stringify({ provider: "provider_a", state: "CO" })
const CREATE = "/v1/sandbox/public_token/create"

const connectionCount = (access: string) =>
  Effect.map(call("GET", "/v1/connections", { token: access }), (r) => r.body.pagination.total as number)

describe("Idempotency-Key over HTTP", () => {
  it.effect("the same key and body replays the first response byte for byte and creates nothing new", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const first = yield* post(CREATE, me.access, sandboxBody, "key-1")
      assert.strictEqual(first.status, 200 <= first.status && first.status < 300 ? first.status : -1)
      const count = yield* connectionCount(me.access)
      const again = yield* post(CREATE, me.access, sandboxBody, "key-1")
      assert.strictEqual(again.status, first.status)
      assert.strictEqual(again.text, first.text)
      assert.strictEqual(again.headers["content-type"], first.headers["content-type"])
      assert.strictEqual(again.headers["idempotent-replayed"], "true")
      assert.isUndefined(first.headers["idempotent-replayed"])
      assert.strictEqual(yield* connectionCount(me.access), count)
      // without a key, or with another key, it runs again
      const other = yield* post(CREATE, me.access, sandboxBody, "key-2")
      assert.notStrictEqual(other.text, first.text)
      assert.strictEqual(yield* connectionCount(me.access), count + 1)
    }).pipe(Effect.provide(app)))

  it.effect("a 4xx is stored and replayed too", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const bad = JSON.stringify({ public_token: "public-nope" })
      const first = yield* post("/v1/link/token/exchange", me.access, bad, "k4")
      assert.isTrue(first.status >= 400 && first.status < 500)
      const again = yield* post("/v1/link/token/exchange", me.access, bad, "k4")
      assert.strictEqual(again.status, first.status)
      assert.strictEqual(again.text, first.text)
      assert.strictEqual(again.headers["idempotent-replayed"], "true")
    }).pipe(Effect.provide(app)))

  it.effect("the same key with another body is 409 idempotency_key_reused", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      yield* post(CREATE, me.access, sandboxBody, "key-r")
      const reused = yield* post(CREATE, me.access, JSON.stringify({ provider: "provider_b", state: "HI" }), "key-r")
      assert.strictEqual(reused.status, 409)
      const body = JSON.parse(reused.text)
      assert.strictEqual(body.error.type, "conflict_error")
      assert.strictEqual(body.error.code, "idempotency_key_reused")
      assert.strictEqual(body.error.param, "Idempotency-Key")
    }).pipe(Effect.provide(app)))

  it.effect("two concurrent requests with one key execute once", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const before = yield* connectionCount(me.access)
      const [a, b] = yield* Effect.all([
        post(CREATE, me.access, sandboxBody, "key-c"),
        post(CREATE, me.access, sandboxBody, "key-c")
      ], { concurrency: 2 })
      assert.strictEqual(yield* connectionCount(me.access), before + 1)
      const statuses = [a.status, b.status].sort()
      if (statuses.includes(409)) {
        const loser = a.status === 409 ? a : b
        assert.strictEqual(JSON.parse(loser.text).error.code, "idempotency_key_in_progress")
      } else {
        assert.strictEqual(a.text, b.text)
      }
    }).pipe(Effect.provide(app)))

  it.effect("a key expires after 24 h on the TestClock", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const first = yield* post(CREATE, me.access, sandboxBody, "key-e")
      // access tokens live an hour: sign in again after moving the clock
      const token = () =>
        Effect.map(
          call("POST", "/v1/oauth/token", {
            json: { grant_type: "client_credentials", client_id: me.client_id, client_secret: me.client_secret }
          }),
          (r) => r.body.access_token as string
        )
      yield* TestClock.adjust("23 hours")
      const replayed = yield* post(CREATE, yield* token(), sandboxBody, "key-e")
      assert.strictEqual(replayed.text, first.text)
      yield* TestClock.adjust("1 hour")
      const fresh = yield* post(CREATE, yield* token(), sandboxBody, "key-e")
      assert.strictEqual(fresh.status, first.status)
      assert.notStrictEqual(fresh.text, first.text)
      assert.isUndefined(fresh.headers["idempotent-replayed"])
    }).pipe(Effect.provide(app)))

  it.effect("a malformed key is 400 invalid_parameter naming Idempotency-Key", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      for (const key of ["x".repeat(256), "caf\u00e9"]) {
        const refused = yield* post(CREATE, me.access, sandboxBody, key)
        assert.strictEqual(refused.status, 400)
        const body = JSON.parse(refused.text)
        assert.strictEqual(body.error.code, "invalid_parameter")
        assert.strictEqual(body.error.param, "Idempotency-Key")
      }
      assert.isTrue(Idempotency.isValidKey("x".repeat(255)))
      assert.isFalse(Idempotency.isValidKey(""))
      assert.isFalse(Idempotency.isValidKey("tab\there"))
    }).pipe(Effect.provide(app)))
})

const services = Layer.merge(TestDatabase.layer, Crypto.layerTest)

const request = (key: string, body = "{}") =>
  HttpServerRequest.fromWeb(
    new Request("http://localhost/v1/things", {
      method: "POST",
      headers: { "idempotency-key": key, "content-type": "application/json" },
      body
    })
  )

const handle = (
  req: HttpServerRequest.HttpServerRequest,
  run: Effect.Effect<HttpServerResponse.HttpServerResponse>
) =>
  Effect.gen(function*() {
    const idempotencyStore = yield* IdempotencyStore
    const crypto = yield* Crypto.Crypto
    // The handler authorises, then says so: only then is the key claimed or replayed.
    return yield* Idempotency.handle(
      req,
      "org_1",
      Effect.zipRight(Idempotency.authorised, run),
      idempotencyStore,
      crypto
    )
  })

describe("Idempotency.handle", () => {
  it.effect("a request refused before its handler's authorisation claims, stores and replays nothing", () =>
    Effect.gen(function*() {
      const idempotencyStore = yield* IdempotencyStore
      const crypto = yield* Crypto.Crypto
      const runs = yield* Ref.make(0)
      const refused = Effect.zipRight(
        Ref.update(runs, (n) => n + 1),
        Effect.orDie(HttpServerResponse.json({ refused: true }, { status: 403 }))
      )
      const first = yield* Idempotency.handle(request("ka"), "org_1", refused, idempotencyStore, crypto)
      assert.strictEqual(first.status, 403)
      assert.isTrue(Option.isNone(yield* idempotencyStore.getIdempotencyKey("org_1", "ka", 0)))
      // the same key then runs as new once authorised, and is replayed after that
      const ok = Effect.orDie(HttpServerResponse.json({ ok: true }, { status: 201 }))
      const second = yield* handle(request("ka"), ok)
      assert.strictEqual(second.status, 201)
      assert.isUndefined(second.headers["idempotent-replayed"])
      const third = yield* handle(request("ka"), ok)
      assert.strictEqual(third.headers["idempotent-replayed"], "true")
      assert.strictEqual(yield* Ref.get(runs), 1)
    }).pipe(Effect.provide(services)))

  it.effect("scopeOf: an access token's keys belong to its client, a connection token's to its connection", () =>
    Effect.sync(() => {
      const organisation = { id: "org_1" }
      const a = Idempotency.scopeOf({ organisation, client_id: "tb_client_a", connection_id: null })
      const b = Idempotency.scopeOf({ organisation, client_id: "tb_client_b", connection_id: null })
      const c = Idempotency.scopeOf({ organisation, client_id: null, connection_id: "conn_1" })
      const other = Idempotency.scopeOf({
        organisation: { id: "org_2" },
        client_id: "tb_client_a",
        connection_id: null
      })
      assert.strictEqual(new Set([a, b, c, other]).size, 4)
      assert.strictEqual(a, Idempotency.scopeOf({ organisation, client_id: "tb_client_a", connection_id: null }))
    }))

  it.effect("a 5xx is not stored: the key is released and a retry runs", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const run = Effect.flatMap(
        Ref.updateAndGet(runs, (n) => n + 1),
        (n) => HttpServerResponse.json({ n }, { status: n === 1 ? 503 : 201 })
      ).pipe(Effect.orDie)
      const first = yield* handle(request("k5"), run)
      assert.strictEqual(first.status, 503)
      const second = yield* handle(request("k5"), run)
      assert.strictEqual(second.status, 201)
      const third = yield* handle(request("k5"), run)
      assert.strictEqual(third.status, 201)
      assert.strictEqual(third.headers["idempotent-replayed"], "true")
      assert.strictEqual(yield* Ref.get(runs), 2)
    }).pipe(Effect.provide(services)))

  it.effect("while the first runs, a second is 409 idempotency_key_in_progress and nothing runs twice", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const runs = yield* Ref.make(0)
      const run = Effect.zipRight(
        Effect.zipRight(Ref.update(runs, (n) => n + 1), Deferred.await(gate)),
        Effect.orDie(HttpServerResponse.json({ ok: true }, { status: 201 }))
      )
      const first = yield* Effect.fork(handle(request("kc"), run))
      yield* Effect.yieldNow()
      while ((yield* Ref.get(runs)) === 0) yield* Effect.yieldNow()
      const second = yield* Effect.either(handle(request("kc"), run))
      assert.isTrue(second._tag === "Left")
      if (second._tag === "Left") {
        assert.strictEqual((second.left as { error: { code: string } }).error.code, "idempotency_key_in_progress")
      }
      yield* Deferred.succeed(gate, undefined)
      const done = yield* Fiber.join(first)
      assert.strictEqual(done.status, 201)
      assert.strictEqual(yield* Ref.get(runs), 1)
    }).pipe(Effect.provide(services)))

  it.effect("stored responses are encrypted: a secret in the body is not in the row", () =>
    Effect.gen(function*() {
      const secret = "whsec_plaintextsecretvalue"
      const run = Effect.orDie(HttpServerResponse.json({ secret }, { status: 201 }))
      const first = yield* handle(request("ks"), run)
      const idempotencyStore = yield* IdempotencyStore
      const row = yield* idempotencyStore.getIdempotencyKey("org_1", "ks", 0)
      assert.isTrue(Option.isSome(row))
      const stored = Option.getOrThrow(row)
      assert.strictEqual(stored.state, "completed")
      assert.notInclude(stored.response ?? "", secret)
      assert.notInclude(Buffer.from(stored.response ?? "", "base64").toString("utf8"), secret)
      const again = yield* handle(request("ks"), run)
      assert.strictEqual(again.status, first.status)
      assert.strictEqual(again.headers["idempotent-replayed"], "true")
    }).pipe(Effect.provide(services)))
})
