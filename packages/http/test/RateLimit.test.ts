/**
 * The rate limiter's database store (`RateLimit.makeDatabase` over `RateBuckets.takeRateToken`), on
 * SQLite: refusal with Retry-After, refill on the TestClock, one bucket shared
 * by two limiters (two processes) on one database, idle buckets dropped, and failing open when
 * the store fails. The store is chosen by `TRACEBRIDGE_RATE_LIMIT_STORE` / `DATABASE_URL`.
 * Postgres (two API servers, concurrent takes) is in `RateLimit.pg.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { RateLimit } from "@tracebridge/http"
import { ConfigProvider, Effect, Layer, Logger, TestClock } from "effect"
import * as Database from "../src/persistence/Database.js"
import { RateBuckets } from "../src/persistence/RateBuckets.js"
import * as TestDatabase from "./support/TestDatabase.js"

const settings = (s: Partial<RateLimit.Settings>): RateLimit.Settings => ({
  rate: 100,
  burst: 200,
  enabled: true,
  ...s
})

/** A limiter over the buckets in context, as one process would build it. */
const limiter = (s: Partial<RateLimit.Settings>) =>
  Effect.map(RateBuckets, (rateBuckets) => RateLimit.makeDatabase(settings(s), rateBuckets))

const takes = (service: RateLimit.Service, key: string, n: number) =>
  Effect.forEach(Array.from({ length: n }), () => service.take(key))

const backends: ReadonlyArray<readonly [string, Layer.Layer<RateBuckets, unknown>]> = [
  ["SQLite", Database.layerSqlite(":memory:")]
]

for (const [name, backend] of backends) {
  describe(`RateLimit database store (${name})`, () => {
    const run = <A, E>(effect: Effect.Effect<A, E, RateBuckets>) => Effect.provide(effect, Layer.orDie(backend))

    it.effect("a burst is allowed, then refused with Retry-After; the headers say what is left", () =>
      run(Effect.gen(function*() {
        const service = yield* limiter({ burst: 3, rate: 0.5 })
        const [a, b, c] = yield* takes(service, "client-a", 3)
        assert.deepStrictEqual(
          [a, b, c].map((d) => [d!.allowed, d!.remaining, d!.limit]),
          [[true, 2, 3], [true, 1, 3], [true, 0, 3]]
        )
        assert.strictEqual(c!.reset, 6)
        const refused = yield* service.take("client-a")
        assert.isFalse(refused.allowed)
        assert.strictEqual(refused.remaining, 0)
        assert.strictEqual(refused.retryAfter, 2)
        assert.isAtLeast(refused.retryAfter, 1)
        // Another key has its own bucket.
        assert.isTrue((yield* service.take("client-b")).allowed)
      })))

    it.effect("the bucket refills as the clock advances, never above the burst", () =>
      run(Effect.gen(function*() {
        const service = yield* limiter({ burst: 3, rate: 0.5 })
        yield* takes(service, "refill", 3)
        assert.isFalse((yield* service.take("refill")).allowed)
        yield* TestClock.adjust("1 second")
        const half = yield* service.take("refill")
        assert.isFalse(half.allowed)
        assert.strictEqual(half.retryAfter, 1)
        yield* TestClock.adjust("1 second")
        const one = yield* service.take("refill")
        assert.isTrue(one.allowed)
        assert.strictEqual(one.remaining, 0)
        yield* TestClock.adjust("1 hour")
        const full = yield* service.take("refill")
        assert.isTrue(full.allowed)
        assert.strictEqual(full.remaining, 2)
        assert.strictEqual(full.reset, 2)
      })))

    it.effect("two limiters (two processes) on one repository share one bucket", () =>
      run(Effect.gen(function*() {
        const first = yield* limiter({ burst: 4, rate: 0.001 })
        const second = yield* limiter({ burst: 4, rate: 0.001 })
        assert.isTrue((yield* first.take("shared")).allowed)
        assert.isTrue((yield* second.take("shared")).allowed)
        assert.isTrue((yield* first.take("shared")).allowed)
        const last = yield* second.take("shared")
        assert.isTrue(last.allowed)
        assert.strictEqual(last.remaining, 0)
        assert.isFalse((yield* first.take("shared")).allowed)
        assert.isFalse((yield* second.take("shared")).allowed)
      })))

    it.effect("concurrent takes never take the same token twice", () =>
      run(Effect.gen(function*() {
        const first = yield* limiter({ burst: 10, rate: 0.001 })
        const second = yield* limiter({ burst: 10, rate: 0.001 })
        const decisions = yield* Effect.all(
          Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? first : second).take("race")),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(decisions.filter((d) => d.allowed).length, 10)
      })))

    it.effect("a clock behind the stored time adds nothing", () =>
      run(Effect.gen(function*() {
        const rateBuckets = yield* RateBuckets
        const bucket = { burst: 2, rate: 1 }
        assert.deepStrictEqual(yield* rateBuckets.takeRateToken("skew", { ...bucket, now: 10_000 }), {
          allowed: true,
          tokens: 1
        })
        assert.deepStrictEqual(yield* rateBuckets.takeRateToken("skew", { ...bucket, now: 5_000 }), {
          allowed: true,
          tokens: 0
        })
        assert.deepStrictEqual(yield* rateBuckets.takeRateToken("skew", { ...bucket, now: 10_500 }), {
          allowed: false,
          tokens: 0.5
        })
      })))

    it.effect("idle full buckets are dropped, at most once a minute; a dropped bucket is full again", () =>
      run(Effect.gen(function*() {
        const rateBuckets = yield* RateBuckets
        // Taken at `now` 0 again, a stored bucket is whatever it holds; a dropped one starts full.
        const probe = rateBuckets.takeRateToken("idle", { burst: 2, rate: 1, now: 0 })
        const service = yield* limiter({ burst: 2, rate: 1 })
        yield* takes(service, "idle", 2) // the first take also ran the delete (nothing to drop)
        assert.isFalse((yield* probe).allowed)
        yield* TestClock.adjust("30 seconds")
        yield* service.take("other") // "idle" is full by now, but the delete waits a minute
        assert.isFalse((yield* probe).allowed)
        yield* TestClock.adjust("31 seconds")
        yield* service.take("other") // deletes what was last touched more than 2 s (burst / rate) ago
        assert.deepStrictEqual(yield* probe, { allowed: true, tokens: 1 })
        // `before` is exclusive.
        yield* rateBuckets.dropRateBuckets(0)
        assert.deepStrictEqual(yield* probe, { allowed: true, tokens: 0 })
        yield* rateBuckets.dropRateBuckets(1)
        assert.deepStrictEqual(yield* probe, { allowed: true, tokens: 1 })
      })))
  })
}

describe("RateLimit database store: failing open", () => {
  it.effect("a failing store never refuses for that: it counts in this process and warns once", () =>
    Effect.gen(function*() {
      const warnings: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") warnings.push(String(message))
      })
      const broken = { ...(yield* RateBuckets), takeRateToken: () => Effect.die(new Error("database down")) }
      const service = RateLimit.makeDatabase(settings({ burst: 2, rate: 0.001 }), broken)
      const decisions = yield* takes(service, "down", 3).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      assert.deepStrictEqual(decisions.map((d) => d.allowed), [true, true, false])
      assert.strictEqual(warnings.length, 1)
    }).pipe(Effect.provide(TestDatabase.layer)))
})

describe("RateLimit store configuration", () => {
  const storeOf = (env: Record<string, string>) =>
    Effect.withConfigProvider(RateLimit.storeConfig, ConfigProvider.fromJson(env))

  it.effect("database with DATABASE_URL, else memory; TRACEBRIDGE_RATE_LIMIT_STORE decides when set", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* storeOf({}), "memory")
      assert.strictEqual(yield* storeOf({ DATABASE_URL: "" }), "memory")
      assert.strictEqual(yield* storeOf({ DATABASE_URL: "postgres://u:p@h/db" }), "database")
      assert.strictEqual(
        yield* storeOf({ DATABASE_URL: "postgres://u:p@h/db", TRACEBRIDGE_RATE_LIMIT_STORE: "memory" }),
        "memory"
      )
      assert.strictEqual(yield* storeOf({ TRACEBRIDGE_RATE_LIMIT_STORE: "database" }), "database")
      assert.isTrue((yield* Effect.either(storeOf({ TRACEBRIDGE_RATE_LIMIT_STORE: "redis" })))._tag === "Left")
    }))

  it.effect("RateLimit.layer builds the store the configuration selects", () =>
    Effect.gen(function*() {
      const rateBuckets = yield* RateBuckets
      const build = (env: Record<string, string>) =>
        Effect.flatMap(RateLimit.RateLimiter, (service) => takes(service, "k", 2)).pipe(
          Effect.provide(RateLimit.layer),
          Effect.provideService(RateBuckets, rateBuckets),
          Effect.withConfigProvider(ConfigProvider.fromJson({ TRACEBRIDGE_RATE_LIMIT_BURST: "2", ...env }))
        )
      yield* build({ TRACEBRIDGE_RATE_LIMIT_STORE: "database" })
      // The stored bucket is empty now; a memory limiter does not look at it.
      assert.isFalse((yield* rateBuckets.takeRateToken("k", { burst: 2, rate: 100, now: 0 })).allowed)
      const memory = yield* build({ TRACEBRIDGE_RATE_LIMIT_STORE: "memory" })
      assert.isTrue(memory.every((d) => d.allowed))
      const database = yield* build({ TRACEBRIDGE_RATE_LIMIT_STORE: "database" })
      assert.isTrue(database.every((d) => !d.allowed))
    }).pipe(Effect.provide(TestDatabase.layer)))
})
