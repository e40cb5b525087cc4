/**
 * Rate limiting per API client (DECISIONS "Tokens and limits"): one token bucket per key, refilled
 * continuously at `rate` tokens a second up to `burst`; every request takes one token. Time comes
 * only from Effect's `Clock`, so tests drive it with `TestClock`.
 *
 * Where the buckets live (`TRACEBRIDGE_RATE_LIMIT_STORE`):
 *
 * - `memory`: in this process (`make`). With several processes each has its own buckets, so a
 *   client gets up to N times the limit.
 * - `database`: in the `rate_limit_buckets` table of the database (`makeDatabase`), shared by
 *   every process on the same database: each take is one atomic statement
 *   (`RateBuckets.takeRateToken`). Idle full buckets are deleted at most once a minute.
 *
 * The default is `database` when `DATABASE_URL` is set (Postgres), else `memory`. If the
 * database cannot be reached the limiter fails open: the request is never refused for that, it is
 * counted in this process's own bucket instead (a warning is logged once per outage).
 *
 * | variable | default | what |
 * |---|---|---|
 * | `TRACEBRIDGE_RATE_LIMIT_RATE` | 100 | tokens added per second (sustained requests per second) |
 * | `TRACEBRIDGE_RATE_LIMIT_BURST` | 200 | bucket size: the most requests in one burst (`RateLimit-Limit`) |
 * | `TRACEBRIDGE_RATE_LIMIT_ENABLED` | true | false turns the limiter (and its headers) off |
 * | `TRACEBRIDGE_RATE_LIMIT_STORE` | `database` with `DATABASE_URL`, else `memory` | where the buckets live |
 *
 * @since 0.1.0
 */
import { Cause, Clock, Config, Context, Effect, Layer, Option } from "effect"
import * as Database from "./persistence/Database.js"
import type * as RateBucketsStore from "./persistence/RateBuckets.js"
import { RateBuckets } from "./persistence/RateBuckets.js"

/**
 * @since 0.1.0
 * @category config
 */
export interface Settings {
  readonly rate: number
  readonly burst: number
  readonly enabled: boolean
}

/**
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<Settings> = Config.all({
  rate: Config.number("TRACEBRIDGE_RATE_LIMIT_RATE").pipe(
    Config.validate({ message: "must be > 0", validation: (n) => n > 0 }),
    Config.withDefault(100)
  ),
  burst: Config.integer("TRACEBRIDGE_RATE_LIMIT_BURST").pipe(
    Config.validate({ message: "must be >= 1", validation: (n) => n >= 1 }),
    Config.withDefault(200)
  ),
  enabled: Config.boolean("TRACEBRIDGE_RATE_LIMIT_ENABLED").pipe(Config.withDefault(true))
})

/**
 * Where the buckets live: this process, or the database (shared by processes).
 *
 * @since 0.1.0
 * @category config
 */
export type Store = "memory" | "database"

/**
 * `TRACEBRIDGE_RATE_LIMIT_STORE`; when unset, `database` if `DATABASE_URL` is set (not empty),
 * else `memory`.
 *
 * @since 0.1.0
 * @category config
 */
export const storeConfig: Config.Config<Store> = Config.all({
  store: Config.option(Config.literal("memory", "database")("TRACEBRIDGE_RATE_LIMIT_STORE")),
  backend: Database.backend
}).pipe(
  Config.map(({ backend, store }): Store =>
    Option.getOrElse(store, () => backend._tag === "Pg" ? "database" : "memory")
  )
)

/**
 * The outcome of taking one token, with what the `RateLimit-*` headers say.
 *
 * @since 0.1.0
 * @category models
 */
export interface Decision {
  readonly allowed: boolean
  /** `RateLimit-Limit`: the bucket size. */
  readonly limit: number
  /** `RateLimit-Remaining`: whole tokens left after this request. */
  readonly remaining: number
  /** `RateLimit-Reset`: seconds until the bucket is full again. */
  readonly reset: number
  /** `Retry-After` when refused: seconds until one token is back (at least 1). */
  readonly retryAfter: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly enabled: boolean
  readonly take: (key: string) => Effect.Effect<Decision>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class RateLimiter extends Context.Tag("@tracebridge/http/RateLimiter")<RateLimiter, Service>() {}

interface Bucket {
  tokens: number
  at: number
}

/** Above this many buckets, full ones (idle keys) are dropped: they hold nothing a new bucket would not. */
const PRUNE_ABOVE = 10_000

const decide = (settings: Settings, allowed: boolean, tokens: number): Decision => ({
  allowed,
  limit: settings.burst,
  remaining: Math.max(0, Math.floor(tokens)),
  reset: Math.max(0, Math.ceil((settings.burst - tokens) / settings.rate)),
  retryAfter: Math.max(1, Math.ceil((1 - tokens) / settings.rate))
})

/**
 * An in-process limiter with the given settings.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (settings: Settings): Service => {
  const buckets = new Map<string, Bucket>()
  const perMilli = settings.rate / 1000
  const refill = (bucket: Bucket, now: number) => {
    bucket.tokens = Math.min(settings.burst, bucket.tokens + Math.max(0, now - bucket.at) * perMilli)
    bucket.at = now
  }
  const prune = (now: number) => {
    for (const [key, bucket] of buckets) {
      refill(bucket, now)
      if (bucket.tokens >= settings.burst) buckets.delete(key)
    }
  }
  return {
    enabled: settings.enabled,
    take: (key) =>
      Effect.map(Clock.currentTimeMillis, (now): Decision => {
        let bucket = buckets.get(key)
        if (bucket === undefined) {
          if (buckets.size >= PRUNE_ABOVE) prune(now)
          bucket = { tokens: settings.burst, at: now }
          buckets.set(key, bucket)
        } else {
          refill(bucket, now)
        }
        const allowed = bucket.tokens >= 1
        if (allowed) bucket.tokens -= 1
        return decide(settings, allowed, bucket.tokens)
      })
  }
}

/** Idle full buckets are deleted from the database at most this often (ms). */
const DROP_EVERY = 60_000

/**
 * A limiter whose buckets live in the database (`RateBuckets.takeRateToken`), shared by every process
 * on the same database. Every `DROP_EVERY` (a minute) of Clock time, one take also deletes the
 * buckets idle for `burst / rate` seconds (they are full: deleting them changes nothing).
 *
 * Fails open: when the store fails (a defect: the database is down, say), the request is
 * counted in an in-process bucket (`make`) instead, so the API stays up and is still limited
 * per process. A warning is logged on the first failure after a success, not on every request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeDatabase = (settings: Settings, buckets: RateBucketsStore.Service): Service => {
  const fallback = make(settings)
  const idleMillis = Math.ceil(settings.burst / settings.rate * 1000)
  let nextDrop = Number.NEGATIVE_INFINITY
  let failing = false
  const drop = (now: number) => {
    if (now < nextDrop) return Effect.void
    nextDrop = now + DROP_EVERY
    return Effect.catchAllDefect(
      buckets.dropRateBuckets(now - idleMillis),
      (defect) => Effect.logWarning("rate limit: could not delete idle buckets", Cause.die(defect))
    )
  }
  return {
    enabled: settings.enabled,
    take: (key) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (now) =>
          buckets.takeRateToken(key, { rate: settings.rate, burst: settings.burst, now }).pipe(
            Effect.map(({ allowed, tokens }) => {
              failing = false
              return decide(settings, allowed, tokens)
            }),
            Effect.tap(() => drop(now)),
            Effect.catchAllDefect((defect) => {
              const warn = failing ? Effect.void : Effect.logWarning(
                "rate limit: the database store failed; counting in this process until it is back (fail open)",
                Cause.die(defect)
              )
              failing = true
              return Effect.zipRight(warn, fallback.take(key))
            })
          )
      )
  }
}

/**
 * The limiter configured from the environment: `TRACEBRIDGE_RATE_LIMIT_*`, with the store from
 * `storeConfig` (the database store uses the `RateBuckets` in context).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<RateLimiter, never, RateBuckets> = Layer.effect(
  RateLimiter,
  Effect.gen(function*() {
    const settings = yield* Effect.orDie(config)
    const store = yield* Effect.orDie(storeConfig)
    return store === "database" ? makeDatabase(settings, yield* RateBuckets) : make(settings)
  })
)

/**
 * An in-process limiter with fixed settings (tests).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (settings: Partial<Settings>): Layer.Layer<RateLimiter> =>
  Layer.succeed(RateLimiter, make({ rate: 100, burst: 200, enabled: true, ...settings }))

/**
 * A database limiter with fixed settings over the `RateBuckets` in context (tests).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDatabaseWith = (settings: Partial<Settings>): Layer.Layer<RateLimiter, never, RateBuckets> =>
  Layer.effect(
    RateLimiter,
    Effect.map(RateBuckets, (buckets) => makeDatabase({ rate: 100, burst: 200, enabled: true, ...settings }, buckets))
  )
