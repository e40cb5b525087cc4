/**
 * The sync's backfills on `@effect/workflow` (ADRs 0014 and 0017): `SyncBackfill` is a workflow
 * with an idempotency key, `backfill/{connection}/{facility}/{generation}/{attempt}`, so starting
 * one twice runs it once, on the engine the caller provides (`WorkflowEngine`). Each resource of
 * a backfill is an `Activity`; within it, the page checkpoint is the store's cursor, written with
 * the data, so a step that runs again after a crash starts from the last stored page and stores
 * nothing twice. `restartStalled` takes over the backfills that stored nothing for `takeoverMs`
 * (claimed `FOR UPDATE SKIP LOCKED`, once each: their attempt rises).
 *
 * Only facilities the connection has are synced (issue #28): `start` creates no row for a facility
 * its provider does not list for the connection (`Sync.Roster`), `restartStalled` drops such a row
 * (one stored before this check) instead of restarting it, and a backfill whose facility the
 * provider does not know drops its row.
 *
 * Polls are short steps with the same checkpoints, run by `Polls`.
 *
 * @since 0.1.0
 */
import { Activity, Workflow, WorkflowEngine } from "@effect/workflow"
import type { ProviderError } from "@tracebridge/core"
import { Resource, UpstreamGovernor } from "@tracebridge/core"
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import * as Sync from "./Sync.js"
import { SyncStore } from "./SyncStore.js"

/**
 * A backfill of one facility.
 *
 * @since 0.1.0
 * @category workflows
 */
export const SyncBackfill = Workflow.make({
  name: "SyncBackfill",
  payload: {
    connection_id: Schema.String,
    facility_id: Schema.String,
    generation: Schema.Number,
    attempt: Schema.Number
  },
  idempotencyKey: (p) => `backfill/${p.connection_id}/${p.facility_id}/${p.generation}/${p.attempt}`
})

/** A provider error carried through an activity's stored result. */
const Failed = Schema.Struct({ _tag: Schema.Literal("Failed"), error: Schema.Unknown })

const failed = (error: ProviderError.ProviderError) => ({ _tag: "Failed" as const, error })

/** How many lists of a facility a backfill reads at once. */
const RESOURCE_CONCURRENCY = 4

/**
 * The workflows' bodies, for the engine.
 *
 * @since 0.1.0
 * @category layers
 */
export const workflowsLayer = Layer.mergeAll(
  SyncBackfill.toLayer((payload) =>
    Effect.gen(function*() {
      const store = yield* SyncStore
      const host = yield* Sync.Host
      const { connection_id: cid, facility_id: fid, generation } = payload
      const state = yield* store.facility(cid, fid)
      if (Option.isNone(state) || state.value.generation !== generation || state.value.status !== "backfilling") return
      const opened = yield* host.open(cid)
      if (Option.isNone(opened)) return
      const found = yield* Effect.either(
        Sync.retryTransient(UpstreamGovernor.background(opened.value.port.getFacility(opened.value.session, fid)))
      )
      if (found._tag === "Left" && found.left._tag === "ResourceNotFound") {
        // not one of the connection's facilities: nothing to sync, and nothing to restart
        yield* Activity.make({ name: "unknown", execute: store.dropFacility(cid, fid) })
        return
      }
      const outcome = yield* Effect.gen(function*() {
        const facility = yield* found
        const resources = yield* Sync.resourcesOf(opened.value, facility)
        // a few lists at a time: the governor paces the licence, and waits on one list's round
        // trips leave room for another's requests
        const steps = yield* Effect.forEach(resources, (resource) =>
          Activity.make({
            name: `resource/${resource}`,
            success: Schema.Union(Schema.Struct({ _tag: Schema.Literal("Done"), changes: Schema.Number }), Failed),
            execute: Sync.retryTransient(Sync.backfillResource(opened.value, facility, cid, generation, resource)).pipe(
              Effect.map((r) => ({ _tag: "Done" as const, changes: r.changes })),
              Effect.catchAll((error) => Effect.succeed(failed(error)))
            )
          }), { concurrency: RESOURCE_CONCURRENCY })
        let changes = 0
        for (const step of steps) {
          if (step._tag === "Failed") return Option.some(step.error as ProviderError.ProviderError)
          changes += step.changes
        }
        yield* Activity.make({
          name: "finish",
          execute: Effect.gen(function*() {
            yield* Sync.finishBackfill(cid, fid)
            if (changes > 0) yield* host.updatesAvailable(cid, fid, changes)
            const all = yield* store.facilities(cid)
            if (all.every((f) => f.status === "live")) yield* host.backfilled(cid)
          })
        })
        return Option.none<ProviderError.ProviderError>()
      }).pipe(Effect.catchAll((error) => Effect.succeed(Option.some(error))))
      if (Option.isSome(outcome)) {
        yield* Activity.make({ name: "failed", execute: Sync.recordFailure(cid, fid, outcome.value) })
      }
    })
  )
)

/**
 * What the HTTP service asks of the sync's backfills.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Starts (or restarts, after a relink or reset: a new generation) the facilities' backfills. */
  readonly start: (
    connectionId: string,
    facilityIds: ReadonlyArray<string>,
    options?: { readonly newGeneration?: boolean; readonly wait?: boolean }
  ) => Effect.Effect<void>
  /** Takes over the backfills that stored nothing for `takeoverMs` (once each): how many. */
  readonly restartStalled: Effect.Effect<number>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Jobs extends Context.Tag("@tracebridge/sync/Jobs")<Jobs, Service>() {}

/**
 * The jobs over the `WorkflowEngine` in context (the workflows registered: `workflowsLayer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  Jobs,
  never,
  WorkflowEngine.WorkflowEngine | SyncStore | Sync.SyncSettings | Sync.Roster
> = Layer
  .effect(
    Jobs,
    Effect.gen(function*() {
      const engine = yield* WorkflowEngine.WorkflowEngine
      const store = yield* SyncStore
      const settings = yield* Sync.SyncSettings
      const roster = yield* Sync.Roster
      const run = <A, E>(effect: Effect.Effect<A, E, WorkflowEngine.WorkflowEngine>) =>
        Effect.provideService(effect, WorkflowEngine.WorkflowEngine, engine)

      const start: Service["start"] = (connectionId, facilityIds, options = {}) =>
        Effect.gen(function*() {
          if (facilityIds.length === 0) return
          const listed = yield* Sync.isListed(roster, connectionId)
          yield* Effect.forEach(facilityIds, (facilityId) =>
            Effect.gen(function*() {
              const known = listed(facilityId)
              if (known === false) {
                yield* Effect.logWarning("sync: not one of the connection's facilities", { connectionId, facilityId })
                return
              }
              // the provider could not say: a facility the sync already has goes on, a new one waits
              if (known === undefined && Option.isNone(yield* store.facility(connectionId, facilityId))) return
              const now = yield* Clock.currentTimeMillis
              const state = options.newGeneration === true
                ? yield* store.newGeneration(connectionId, facilityId, now)
                : yield* store.ensureFacility(connectionId, facilityId, now)
              if (state.status !== "backfilling") return
              const payload = {
                connection_id: connectionId,
                facility_id: facilityId,
                generation: state.generation,
                attempt: state.attempt
              }
              yield* run(
                options.wait === true
                  ? SyncBackfill.execute(payload)
                  : Effect.asVoid(SyncBackfill.execute(payload, { discard: true }))
              )
            }), { discard: true })
        }).pipe(Effect.orDie)

      const restartStalled: Service["restartStalled"] = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const stalled = yield* store.claimStalled(now - settings.takeoverMs, now, 100)
        const rosters = new Map<string, (facilityId: string) => boolean | undefined>()
        for (const f of stalled) {
          let listed = rosters.get(f.connection_id)
          if (listed === undefined) {
            listed = yield* Sync.isListed(roster, f.connection_id)
            rosters.set(f.connection_id, listed)
          }
          // a facility the connection does not have (stored before the check): dropped, not restarted
          if (listed(f.facility_id) === false) {
            yield* Effect.logWarning("sync: dropped a facility the connection does not have", {
              connectionId: f.connection_id,
              facilityId: f.facility_id
            })
            yield* store.dropFacility(f.connection_id, f.facility_id)
            continue
          }
          yield* run(SyncBackfill.execute({
            connection_id: f.connection_id,
            facility_id: f.facility_id,
            generation: f.generation,
            attempt: f.attempt
          }, { discard: true }))
        }
        return stalled.length
      }).pipe(Effect.orDie)

      return { start, restartStalled }
    })
  )

/**
 * The resources the sync stores (every facility-level list).
 *
 * @since 0.1.0
 * @category constants
 */
export const resourceNames: ReadonlyArray<string> = Resource.names
