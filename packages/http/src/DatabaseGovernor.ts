/**
 * The upstream rate governor of the `/v1` service (ADR 0015; core's `UpstreamGovernor`): its
 * buckets live in the `upstream_rate_buckets` table (`UpstreamBuckets`), so every API node on one
 * database shares one bucket per provider, vendor key and licence, whichever node, connection or
 * caller (a pass-through read, a sync) sends the request. The production ports get it
 * (`Providers`); sandbox ports do not: the in-process emulator has no limit.
 *
 * - **One statement per upstream request**, a reservation: the caller waits on its `Clock` until its
 *   token's time. Time comes from the caller's `Clock`, never the database's (keep the nodes'
 *   clocks in sync, as for the API's own rate limit).
 * - **Idle buckets.** At most once a minute, one take also deletes the buckets that are full
 *   (a missing bucket is full).
 * - **Fails open.** When the database call fails, the request is paced by an in-process governor
 *   instead (per node, so N nodes may send up to N times the rate until the database is back);
 *   one warning is logged when this starts.
 *
 * @since 0.1.0
 */
import { UpstreamGovernor } from "@tracebridge/core"
import { Cause, Effect } from "effect"
import type * as UpstreamBucketsStore from "./persistence/UpstreamBuckets.js"

/** Full buckets are deleted from the database at most this often (ms). */
const DROP_EVERY = 60_000

/**
 * A governor whose buckets live in the database, shared by every process on it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (buckets: UpstreamBucketsStore.Service): UpstreamGovernor.Service => {
  const fallback = UpstreamGovernor.memoryStore()
  let nextDrop = Number.NEGATIVE_INFINITY
  let failing = false
  const drop = (now: number) => {
    if (now < nextDrop) return Effect.void
    nextDrop = now + DROP_EVERY
    return Effect.catchAllDefect(
      buckets.dropFullBuckets(now),
      (defect) => Effect.logWarning("upstream governor: could not delete idle buckets", Cause.die(defect))
    )
  }
  const failOpen = <A>(stored: Effect.Effect<A>, inProcess: Effect.Effect<A>): Effect.Effect<A> =>
    stored.pipe(
      Effect.tap(() => {
        failing = false
      }),
      Effect.catchAllDefect((defect) => {
        const warn = failing ? Effect.void : Effect.logWarning(
          "upstream governor: the database store failed; pacing in this process until it is back (fail open)",
          Cause.die(defect)
        )
        failing = true
        return Effect.zipRight(warn, inProcess)
      })
    )
  return UpstreamGovernor.fromStore({
    reserve: (key, rate, now) =>
      Effect.zipLeft(failOpen(buckets.reserve(key, rate, now), fallback.reserve(key, rate, now)), drop(now)),
    pauseUntil: (key, until, now) => failOpen(buckets.pauseUntil(key, until, now), fallback.pauseUntil(key, until, now))
  })
}
