/**
 * The upstream rate governor (issue 20, ADR 0015): one token bucket per provider, vendor key and
 * licence, which every request an adapter sends to a state system takes a token from first. A
 * state system's limits are per vendor key and licence, so every connection, every process and
 * every caller (a pass-through read, a sync) reaching the same licence with the same vendor key
 * shares one bucket: several integrations on one key no longer throttle each other into 429s.
 *
 * - **Pacing.** A bucket holds one token (the policy's `burst`, 1 unless set) and refills at the
 *   policy's `requestsPerSecond`, so requests are spaced `1 / requestsPerSecond` apart: never more
 *   than `requestsPerSecond` in any one second, which is how the state systems count. A take never
 *   fails: it reserves the next token and waits (on Effect's `Clock`) until that token's time.
 * - **Pause.** An upstream 429 with `Retry-After` pauses the bucket for that long: no token of the
 *   key is handed out before the pause ends (takes already waiting keep their turn).
 * - **Priority.** A caller is interactive (a `/v1` request, a Connect login check) unless it runs
 *   under `background` (the managed sync, the webhook poller). Before its tokens, a background
 *   caller is admitted (`admit`) by a second bucket per key that refills at `BACKGROUND_SHARE` of the
 *   key's rate, so the background never holds more than that share of the key's tokens and an
 *   interactive call waits about one spacing, not behind a backfill's queue.
 * - **Keys.** `key` names a bucket by provider, a SHA-256 fingerprint of the vendor key (never the
 *   key itself) and licence.
 *
 * This module is the interface (`UpstreamGovernor`, a `Context.Tag`), the bucket arithmetic over a
 * `Store` (`fromStore`), and an in-process store (`makeMemory`, for tests and one process). The
 * HTTP service provides a store in its database, shared by every node (`@tracebridge/http`'s
 * `UpstreamGovernor`). An adapter reads the governor in context when it builds its production port
 * (`Effect.serviceOption`); without one it keeps its own in-process pacing.
 *
 * @since 0.1.0
 */
import { Clock, Context, Duration, Effect, FiberRef, GlobalValue, Layer, Option, Redacted } from "effect"
import type { RateLimitPolicy } from "./ProviderDescriptor.js"

/**
 * How fast a bucket refills: a descriptor's `rateLimit` (or an operator's override of it), and how
 * many tokens it holds at most (`burst`, default 1: requests evenly spaced; tests that must not
 * wait on a `TestClock` set a large one).
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy extends Pick<RateLimitPolicy, "requestsPerSecond"> {
  readonly burst?: number | undefined
}

/**
 * A policy's rate (above zero) and bucket size (at least 1).
 *
 * @since 0.1.0
 * @category models
 */
export interface Rate {
  readonly rate: number
  readonly burst: number
}

/**
 * @since 0.1.0
 * @category getters
 */
export const rateOf = (policy: Policy): Rate => ({
  rate: Math.max(policy.requestsPerSecond, Number.MIN_VALUE),
  burst: Math.max(1, policy.burst ?? 1)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Takes one token from the bucket `key`, waiting on the `Clock` until it is there (after any
   * pause of the key). Call it before every upstream request.
   */
  readonly take: (key: string, policy: Policy) => Effect.Effect<void>
  /**
   * Admits a caller to the key before its `take` (and before any concurrency cap of the adapter's):
   * an interactive caller at once; a background one (`background`) after a token of the key's
   * background bucket, which refills at `BACKGROUND_SHARE` of `policy`'s rate.
   */
  readonly admit: (key: string, policy: Policy) => Effect.Effect<void>
  /** Pauses the bucket `key` for `duration` from now (an upstream 429's `Retry-After`). */
  readonly pause: (key: string, duration: Duration.DurationInput) => Effect.Effect<void>
  /**
   * An upstream answered 429 for the bucket `key`: every adapter calls it on every 429, so that a
   * deployment can count them. With a `Retry-After`, the bucket pauses for it ({@link Service.pause});
   * without one, nothing else changes (the adapter backs off on its own).
   */
  readonly throttled: (key: string, retryAfter: Option.Option<Duration.DurationInput>) => Effect.Effect<void>
}

/**
 * The share of a key's rate that background callers may hold between them: the rest is kept for
 * interactive calls (a `/v1` request, a Connect login check), which then never queue behind a
 * backfill.
 *
 * @since 0.1.0
 * @category constants
 */
export const BACKGROUND_SHARE = 0.8

/**
 * Who is calling: an interactive caller (the default) or the background (`background`).
 *
 * @since 0.1.0
 * @category models
 */
export type Priority = "interactive" | "background"

/**
 * The priority of the calls a fiber makes (`interactive` unless set).
 *
 * @since 0.1.0
 * @category fiber refs
 */
export const currentPriority: FiberRef.FiberRef<Priority> = GlobalValue.globalValue(
  Symbol.for("@tracebridge/core/UpstreamGovernor/currentPriority"),
  () => FiberRef.unsafeMake<Priority>("interactive")
)

/**
 * Runs `self` as background work: its upstream calls are admitted at the background share of each
 * key's rate (the managed sync, the webhook poller).
 *
 * @since 0.1.0
 * @category combinators
 */
export const background = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(self, currentPriority, "background")

/**
 * Whether the calling fiber runs as background work.
 *
 * @since 0.1.0
 * @category getters
 */
export const isBackground: Effect.Effect<boolean> = FiberRef.getWith(
  currentPriority,
  (priority) => Effect.succeed(priority === "background")
)

/** A key's background bucket. */
const backgroundKey = (key: string) => `${key}|background`

/**
 * `throttled` over a `pause`: pauses for the `Retry-After` when there is one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const throttledBy = (pause: Service["pause"]): Service["throttled"] => (key, retryAfter) =>
  Option.match(retryAfter, { onNone: () => Effect.void, onSome: (duration) => pause(key, duration) })

/**
 * @since 0.1.0
 * @category tags
 */
export class UpstreamGovernor extends Context.Tag("@tracebridge/core/UpstreamGovernor")<UpstreamGovernor, Service>() {}

/**
 * Where buckets live. Both calls are atomic per key, so that callers in several processes sharing
 * one store never take the same token. `now` is the caller's `Clock` (epoch ms).
 *
 * @since 0.1.0
 * @category models
 */
export interface Store {
  /**
   * Reserves the next token of `key` (a bucket of `burst` tokens, refilled at `rate` a second
   * since it was last touched; a missing bucket is full): the milliseconds to wait before using it.
   */
  readonly reserve: (key: string, rate: Rate, now: number) => Effect.Effect<number>
  /** No token of `key` before `until` (epoch ms); a later pause already in force stays. */
  readonly pauseUntil: (key: string, until: number, now: number) => Effect.Effect<void>
}

/** How many times a take gives up a token it woke too late for, before it goes anyway. */
const MAX_LATE_RETAKES = 5

/**
 * Reserves a token and sleeps until its time. A take that wakes later than one spacing interval
 * after its token's time (the event loop was busy: a large page parsed, a store written) gives the
 * token up and reserves again: requests that all woke late together would otherwise go out
 * together, more of them in one second than the state system allows.
 */
const takeFrom = (store: Store, key: string, policy: Policy, retakes: number): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.flatMap(store.reserve(key, rateOf(policy), now), (wait) => {
      if (wait <= 0) return Effect.void
      const due = now + wait
      return Effect.zipRight(
        Effect.sleep(Duration.millis(wait)),
        Effect.flatMap(Clock.currentTimeMillis, (woke) =>
          woke - due > 1000 / policy.requestsPerSecond && retakes < MAX_LATE_RETAKES
            ? takeFrom(store, key, policy, retakes + 1)
            : Effect.void)
      )
    }))

/**
 * A governor over a store: `take` reserves, then sleeps until the token's time (again, if it woke
 * too late for it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromStore = (store: Store): Service => {
  const pause: Service["pause"] = (key, duration) =>
    Effect.flatMap(
      Clock.currentTimeMillis,
      (now) => store.pauseUntil(key, now + Math.max(0, Duration.toMillis(Duration.decode(duration))), now)
    )
  const admit: Service["admit"] = (key, policy) =>
    FiberRef.getWith(currentPriority, (priority) =>
      priority === "interactive" ? Effect.void : takeFrom(
        store,
        backgroundKey(key),
        { requestsPerSecond: policy.requestsPerSecond * BACKGROUND_SHARE, burst: policy.burst },
        0
      ))
  return { take: (key, policy) => takeFrom(store, key, policy, 0), admit, pause, throttled: throttledBy(pause) }
}

/**
 * One bucket's state: the tokens it held at `at` (negative: tokens already reserved ahead), `at`
 * itself, which a pause moves to its end, and the rate and size of its last reservation.
 *
 * @since 0.1.0
 * @category models
 */
export interface Bucket extends Rate {
  readonly tokens: number
  readonly at: number
}

/**
 * The bucket arithmetic of one reservation, shared by every store (the database stores run the
 * same in SQL): refill since `at` (nothing while paused: `at` is then ahead of `now`) up to
 * `burst`, take one, and wait until `at` plus the time the deficit takes to refill.
 *
 * @since 0.1.0
 * @category utils
 */
export const reserveIn = (
  bucket: Bucket | undefined,
  { burst, rate }: Rate,
  now: number
): { readonly bucket: Bucket; readonly wait: number } => {
  const before = bucket ?? { tokens: burst, at: now, rate, burst }
  const refilled = Math.min(burst, before.tokens + Math.max(0, now - before.at) * rate / 1000)
  const after: Bucket = { tokens: refilled - 1, at: Math.max(before.at, now), rate, burst }
  return { bucket: after, wait: waitOf(after, now) }
}

/**
 * A bucket paused until `until`: refilled to `now` at its last rate, its time moves to `until`,
 * and it is full then, unless tokens are still reserved ahead (they keep their turn). A pause
 * ending before one in force changes nothing.
 *
 * @since 0.1.0
 * @category utils
 */
export const pauseIn = (bucket: Bucket | undefined, until: number, now: number): Bucket => {
  if (bucket === undefined) return { tokens: 1, at: until, rate: 1, burst: 1 }
  if (until <= bucket.at) return bucket
  const refilled = Math.min(bucket.burst, bucket.tokens + Math.max(0, now - bucket.at) * bucket.rate / 1000)
  return { ...bucket, tokens: refilled < 0 ? refilled : bucket.burst, at: until }
}

/**
 * How long a reservation that left `bucket` waits: until the bucket's time, plus the time its
 * deficit (tokens reserved ahead) takes to refill.
 *
 * @since 0.1.0
 * @category utils
 */
export const waitOf = (bucket: Bucket, now: number): number =>
  Math.max(0, bucket.at - now) + Math.max(0, -bucket.tokens) * 1000 / bucket.rate

/** Above this many buckets, the in-process store drops the idle ones. */
const PRUNE_ABOVE = 10_000

/**
 * An in-process store: a map of buckets (idle ones dropped past 10,000 keys).
 *
 * @since 0.1.0
 * @category constructors
 */
export const memoryStore = (): Store => {
  const buckets = new Map<string, Bucket>()
  const prune = (now: number) => {
    // A full bucket is what a missing one means.
    for (const [key, bucket] of buckets) {
      if (bucket.tokens + Math.max(0, now - bucket.at) * bucket.rate / 1000 >= bucket.burst) buckets.delete(key)
    }
  }
  return {
    reserve: (key, rate, now) =>
      Effect.sync(() => {
        if (buckets.size >= PRUNE_ABOVE && !buckets.has(key)) prune(now)
        const { bucket, wait } = reserveIn(buckets.get(key), rate, now)
        buckets.set(key, bucket)
        return wait
      }),
    pauseUntil: (key, until, now) =>
      Effect.sync(() => {
        buckets.set(key, pauseIn(buckets.get(key), until, now))
      })
  }
}

/**
 * An in-process governor (tests, a single process).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<Service> = Effect.sync(() => fromStore(memoryStore()))

/**
 * The governor in context, else a new in-process one: what an adapter calls when it builds a
 * port, so that the host (the HTTP service) decides where the buckets live.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromContextOrMemory: Effect.Effect<Service> = Effect.flatMap(
  Effect.serviceOption(UpstreamGovernor),
  Option.match({ onNone: () => makeMemory, onSome: Effect.succeed })
)

/**
 * A governor that never waits: for the sandbox's in-process emulator, which has no limit.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unlimited: Service = {
  take: () => Effect.void,
  admit: () => Effect.void,
  pause: () => Effect.void,
  throttled: () => Effect.void
}

/**
 * The in-process governor as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<UpstreamGovernor> = Layer.effect(UpstreamGovernor, makeMemory)

const encoder = new TextEncoder()

/**
 * A secret's fingerprint for a bucket key: the first 16 bytes of its SHA-256, in hex (Web Crypto).
 * The secret itself never enters a key, a log or a table.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fingerprint = (secret: Redacted.Redacted<string>): Effect.Effect<string> =>
  Effect.promise(async () => {
    const digest = new Uint8Array(
      await globalThis.crypto.subtle.digest("SHA-256", encoder.encode(Redacted.value(secret)))
    )
    let hex = ""
    for (const byte of digest.subarray(0, 16)) hex += byte.toString(16).padStart(2, "0")
    return hex
  })

/**
 * A bucket's key: `{provider}|{vendor key fingerprint}|{licence}` (`licence` empty for calls that
 * name none, such as a facility list).
 *
 * @since 0.1.0
 * @category constructors
 */
export const key = (options: {
  readonly provider: string
  readonly vendorKeyFingerprint: string
  readonly licence: string | undefined
}): string => `${options.provider}|${options.vendorKeyFingerprint}|${options.licence ?? ""}`
