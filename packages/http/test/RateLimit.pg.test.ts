/**
 * The rate limiter's database store on Postgres: two complete API servers (two pools) on one
 * database share a client's bucket, and concurrent takes from two processes never take the same
 * token twice (the row lock of `INSERT … ON CONFLICT DO UPDATE`). Runs with `npm run test:pg`
 * (TEST_DATABASE_URL), each test in a fresh schema of its own.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Http, RateLimit } from "@tracebridge/http"
import { ConfigProvider, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import * as Database from "../src/persistence/Database.js"
import { RateBuckets } from "../src/persistence/RateBuckets.js"
import * as Crypto from "../src/services/Crypto.js"
import { freshSchema, testDatabaseUrl } from "./support/PgSchema.js"
import { call, signIn } from "./support/TestApp.js"

const url = testDatabaseUrl("RateLimit.pg.test.ts")
const freshSchemaHere = freshSchema(url, "ratelimit")

describe("Rate limit shared through Postgres", () => {
  it.live("two API servers on one database: a client's burst counts on both", () =>
    Effect.gen(function*() {
      const database = yield* freshSchemaHere
      // What a deployment sets; the store would default to `database` with DATABASE_URL anyway.
      const env = ConfigProvider.fromJson({
        TRACEBRIDGE_RATE_LIMIT_STORE: "database",
        TRACEBRIDGE_RATE_LIMIT_BURST: "6",
        TRACEBRIDGE_RATE_LIMIT_RATE: "0.001"
      })
      const crypto = Layer.succeed(Crypto.Crypto, Crypto.make([randomBytes(32)]))
      // One "process": its own server, pool and limiter; the default `RateLimit.layer`.
      const server = () =>
        Http.makeHttpLive({ worker: false }).pipe(
          Layer.provideMerge(NodeHttpServer.layerTest),
          Layer.provideMerge(crypto),
          Layer.provideMerge(Database.layerPg(database))
        )
      const a = yield* Layer.build(server()).pipe(Effect.withConfigProvider(env))
      const b = yield* Layer.build(server()).pipe(Effect.withConfigProvider(env))
      const on = (context: typeof a, path = "/v1/webhooks", token?: string) =>
        Effect.provide(call("GET", path, token === undefined ? {} : { token }), context)

      const me = yield* Effect.provide(signIn, a)
      const remaining: Array<string | undefined> = []
      for (let i = 0; i < 3; i++) {
        for (const context of [a, b]) {
          const ok = yield* on(context, "/v1/webhooks", me.access)
          assert.strictEqual(ok.status, 200)
          assert.strictEqual(ok.headers["ratelimit-limit"], "6")
          remaining.push(ok.headers["ratelimit-remaining"])
        }
      }
      assert.deepStrictEqual(remaining, ["5", "4", "3", "2", "1", "0"])
      for (const context of [a, b]) {
        const refused = yield* on(context, "/v1/webhooks", me.access)
        assert.strictEqual(refused.status, 429)
        assert.strictEqual(refused.body.error.type, "rate_limit_error")
        assert.strictEqual(refused.body.error.code, "rate_limited")
        assert.isAtLeast(Number(refused.headers["retry-after"]), 1)
        assert.strictEqual(refused.headers["ratelimit-remaining"], "0")
      }
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.live(
    "20 concurrent takes from two processes with a burst of 10: exactly 10 allowed",
    () =>
      Effect.gen(function*() {
        const database = yield* freshSchemaHere
        const instance = () =>
          Layer.build(
            RateLimit.layerDatabaseWith({ burst: 10, rate: 0.001 }).pipe(
              Layer.provide(Database.layerPg(database))
            )
          )
        const first = yield* instance()
        const second = yield* instance()
        const take = Effect.flatMap(RateLimit.RateLimiter, (limiter) => limiter.take("client_race"))
        const decisions = yield* Effect.all(
          Array.from({ length: 20 }, (_, i) => Effect.provide(take, i % 2 === 0 ? first : second)),
          { concurrency: "unbounded" }
        )
        const allowed = decisions.filter((d) => d.allowed)
        assert.strictEqual(allowed.length, 10)
        // Each allowed take saw the one before it: every count from 9 down to 0 once.
        assert.deepStrictEqual(allowed.map((d) => d.remaining).sort((x, y) => x - y), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
        assert.isTrue(decisions.filter((d) => !d.allowed).every((d) => d.retryAfter >= 1))
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )

  it.live(
    "the refill is computed from the caller's clock; a clock behind adds nothing; idle buckets drop",
    () =>
      Effect.gen(function*() {
        const database = yield* freshSchemaHere
        const check = Effect.gen(function*() {
          const rateBuckets = yield* RateBuckets
          const bucket = { burst: 2, rate: 0.5 }
          const take = (now: number) => rateBuckets.takeRateToken("client_clock", { ...bucket, now })
          assert.deepStrictEqual(yield* take(1_767_225_600_000), { allowed: true, tokens: 1 })
          assert.deepStrictEqual(yield* take(1_767_225_600_000), { allowed: true, tokens: 0 })
          assert.deepStrictEqual(yield* take(1_767_225_599_000), { allowed: false, tokens: 0 })
          assert.deepStrictEqual(yield* take(1_767_225_601_000), { allowed: false, tokens: 0.5 })
          assert.deepStrictEqual(yield* take(1_767_225_602_000), { allowed: true, tokens: 0 })
          assert.deepStrictEqual(yield* take(1_767_225_700_000), { allowed: true, tokens: 1 })
          yield* rateBuckets.dropRateBuckets(1_767_225_700_000)
          assert.deepStrictEqual(yield* take(1_767_225_600_000), { allowed: true, tokens: 0 })
          yield* rateBuckets.dropRateBuckets(1_767_225_700_001)
          assert.deepStrictEqual(yield* take(1_767_225_600_000), { allowed: true, tokens: 1 })
        })
        yield* Effect.provide(check, Database.layerPg(database))
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )
})
