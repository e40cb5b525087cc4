/**
 * Rate limiting per API client (DECISIONS "Tokens and limits"): one token bucket per key, refilled
 * continuously at `rate` tokens a second up to `burst`; every request takes one token. Time comes
 * only from Effect's `Clock`, so tests drive it with `TestClock`. The buckets live in this process.
 *
 * | variable | default | what |
 * |---|---|---|
 * | `TRACEBRIDGE_RATE_LIMIT_RATE` | 100 | tokens added per second (sustained requests per second) |
 * | `TRACEBRIDGE_RATE_LIMIT_BURST` | 200 | bucket size: the most requests in one burst (`RateLimit-Limit`) |
 * | `TRACEBRIDGE_RATE_LIMIT_ENABLED` | true | false turns the limiter (and its headers) off |
 *
 * @since 0.1.0
 */
import { Clock, Config, Context, Effect, Layer } from "effect"

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
    Config.withDefault(100),
    Config.validate({ message: "must be > 0", validation: (n) => n > 0 })
  ),
  burst: Config.integer("TRACEBRIDGE_RATE_LIMIT_BURST").pipe(
    Config.withDefault(200),
    Config.validate({ message: "must be >= 1", validation: (n) => n >= 1 })
  ),
  enabled: Config.boolean("TRACEBRIDGE_RATE_LIMIT_ENABLED").pipe(Config.withDefault(true))
})

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
        return {
          allowed,
          limit: settings.burst,
          remaining: Math.floor(bucket.tokens),
          reset: Math.ceil((settings.burst - bucket.tokens) / settings.rate),
          retryAfter: Math.max(1, Math.ceil((1 - bucket.tokens) / settings.rate))
        }
      })
  }
}

/**
 * The in-process limiter configured from the environment.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<RateLimiter, never> = Layer.effect(
  RateLimiter,
  Effect.map(Effect.orDie(config), make)
)

/**
 * A limiter with fixed settings (tests).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (settings: Partial<Settings>): Layer.Layer<RateLimiter> =>
  Layer.succeed(RateLimiter, make({ rate: 100, burst: 200, enabled: true, ...settings }))
