/**
 * Incremental polls: short steps whose checkpoint is the store's cursor (ADR 0017). They do not
 * run as workflows: the in-process engine keeps every execution for the life of the process, and
 * a poll every few minutes per facility would grow it without end; a poll repeated by a crash
 * stores nothing twice anyway.
 *
 * - `pollNow`: one pass over a facility, now (the sandbox, after each change).
 * - `tick` (every node that runs the workers, every few seconds): claims as many due facilities as
 *   the node has room for (`CONCURRENCY`; `FOR UPDATE SKIP LOCKED`, so each is polled by one node)
 *   and polls them in the background, each slot claiming the next due facility when it finishes;
 *   what a busy node does not claim stays due for any node with room. It also takes over stalled
 *   backfills (`Jobs.restartStalled`). A due facility the
 *   connection does not have (stored before the sync checked, issue #28) is dropped, not polled.
 *
 * @since 0.1.0
 */
import { Clock, Context, Effect, FiberSet, Layer, Option } from "effect"
import { Jobs } from "./Jobs.js"
import * as Sync from "./Sync.js"
import { SyncStore } from "./SyncStore.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** One poll of a facility, now: the changes stored. */
  readonly pollNow: (connectionId: string, facilityId: string) => Effect.Effect<number>
  /** The scheduler's pass: the due polls started, the stalled backfills restarted. */
  readonly tick: Effect.Effect<{ readonly polls: number; readonly restarted: number }>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Polls extends Context.Tag("@tracebridge/sync/Polls")<Polls, Service>() {}

/**
 * How many polls a node runs at once. A tick claims no more than the room left, and a slot that
 * finishes claims the next due facility itself, so a node never holds claims it cannot start (they
 * would wait in its memory, due again in the store, and be claimed twice).
 *
 * @since 0.1.0
 * @category constants
 */
export const CONCURRENCY = 8

/** What the polls need. */
type Needs = Sync.Host | SyncStore | Sync.SyncSettings | Jobs | Sync.Roster

/**
 * The polls, over the host, the store and the backfills.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Polls, never, Needs> = Layer.scoped(
  Polls,
  Effect.gen(function*() {
    const host = yield* Sync.Host
    const store = yield* SyncStore
    const settings = yield* Sync.SyncSettings
    const jobs = yield* Jobs
    const roster = yield* Sync.Roster
    const running = yield* FiberSet.make()

    const pollNow: Service["pollNow"] = (connectionId, facilityId) =>
      Effect.gen(function*() {
        const opened = yield* host.open(connectionId)
        if (Option.isNone(opened)) return 0
        return yield* Sync.retryTransient(Sync.pollFacility(opened.value, connectionId, facilityId)).pipe(
          Effect.tap((changes) => changes > 0 ? host.updatesAvailable(connectionId, facilityId, changes) : Effect.void),
          Effect.catchAll((error) => Effect.as(Sync.recordFailure(connectionId, facilityId, error), 0))
        )
      }).pipe(
        Effect.provideService(SyncStore, store),
        Effect.provideService(Sync.SyncSettings, settings),
        Effect.provideService(Sync.Host, host)
      )

    /** Polls a claimed facility, unless the connection does not have it (then it is dropped). */
    const pollClaimed = (f: { readonly connection_id: string; readonly facility_id: string }) =>
      Effect.gen(function*() {
        const listed = yield* Sync.isListed(roster, f.connection_id)
        // a facility the connection does not have (stored before the sync checked): dropped
        if (listed(f.facility_id) === false) yield* store.dropFacility(f.connection_id, f.facility_id)
        else yield* pollNow(f.connection_id, f.facility_id)
      })

    // the polls this node runs: claimed, not yet finished
    let inFlight = 0
    /** One slot: the claimed facility, then the next due one while there is one. */
    const slot = (first: { readonly connection_id: string; readonly facility_id: string }) =>
      Effect.gen(function*() {
        let next: typeof first | undefined = first
        while (next !== undefined) {
          yield* pollClaimed(next)
          const now = yield* Clock.currentTimeMillis
          next = (yield* store.claimDue(now, settings.pollIntervalMs, 1))[0]
        }
      }).pipe(Effect.ensuring(Effect.sync(() => inFlight--)))

    const tick: Service["tick"] = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const room = CONCURRENCY - inFlight
      const due = room > 0 ? yield* store.claimDue(now, settings.pollIntervalMs, room) : []
      for (const f of due) {
        inFlight++
        yield* FiberSet.run(running, slot(f))
      }
      const restarted = yield* jobs.restartStalled
      return { polls: due.length, restarted }
    })

    return { pollNow, tick }
  })
)
