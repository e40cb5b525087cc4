/**
 * Incremental polls: short steps whose checkpoint is the store's cursor (ADR 0017). They do not
 * run as workflows: the in-process engine keeps every execution for the life of the process, and
 * a poll every few minutes per facility would grow it without end; a poll repeated by a crash
 * stores nothing twice anyway.
 *
 * - `pollNow`: one pass over a facility, now (the sandbox, after each change).
 * - `tick` (every node that runs the workers, every few seconds): claims the due facilities
 *   (`FOR UPDATE SKIP LOCKED`, so each is polled by one node) and polls them in the background,
 *   a few at a time, and takes over stalled backfills (`Jobs.restartStalled`). A due facility the
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

/** How many due polls a node runs at once. */
const CONCURRENCY = 8

/** How many due facilities a tick claims at most. */
const BATCH = 200

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

    const tick: Service["tick"] = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const due = yield* store.claimDue(now, settings.pollIntervalMs, BATCH)
      if (due.length > 0) {
        yield* FiberSet.run(
          running,
          Effect.gen(function*() {
            const rosters = new Map<string, (facilityId: string) => boolean | undefined>()
            const polled: Array<(typeof due)[number]> = []
            for (const f of due) {
              let listed = rosters.get(f.connection_id)
              if (listed === undefined) {
                listed = yield* Sync.isListed(roster, f.connection_id)
                rosters.set(f.connection_id, listed)
              }
              // a facility the connection does not have (stored before the sync checked): dropped
              if (listed(f.facility_id) === false) yield* store.dropFacility(f.connection_id, f.facility_id)
              else polled.push(f)
            }
            yield* Effect.forEach(polled, (f) => pollNow(f.connection_id, f.facility_id), {
              concurrency: CONCURRENCY,
              discard: true
            })
          })
        )
      }
      const restarted = yield* jobs.restartStalled
      return { polls: due.length, restarted }
    })

    return { pollNow, tick }
  })
)
