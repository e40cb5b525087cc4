/**
 * The managed sync in the API (`@tracebridge/sync`; ADR 0014): the host the sync runs against
 * (a connection's port and session, its webhooks and status), the workflow engine, and the
 * scheduler daemon.
 *
 * - Reads of sandbox connections run on a world current with the database (`SandboxState.read`).
 * - `sync.updates_available`, `connection.degraded` are queued like every event (signed and
 *   retried by the dispatcher); a refused login moves the connection to `error`, which queues
 *   `connection.login_required` (`Connections.moveTo`).
 * - A production connection stays `pending` until every facility's first backfill is done.
 * - The engine: `@effect/workflow`'s in-process engine. Jobs are keyed, and their checkpoints are
 *   the store's cursors, so a node that restarts, or another node, picks a stopped backfill up
 *   from its last stored page (the scheduler's `claimStalled`), and due polls are claimed with
 *   `FOR UPDATE SKIP LOCKED`, so nodes share them.
 *
 * @since 0.1.0
 */
import { WorkflowEngine } from "@effect/workflow"
import type { ProviderPort } from "@tracebridge/core"
import { Deadline, Ids, UpstreamGovernor, WebhookEvent as WebhookEvents } from "@tracebridge/core"
import { Jobs, Polls, Sync, SyncStore } from "@tracebridge/sync"
import { Clock, Config, Duration, Effect, Either, Layer, Option } from "effect"
import type { Connection } from "../persistence/ConnectionStore.js"
import { ConnectionStore } from "../persistence/ConnectionStore.js"
import * as RequestLogCapture from "../RequestLogCapture.js"
import { Connections } from "./Connections.js"
import * as Crypto from "./Crypto.js"
import { Providers } from "./Providers.js"
import { Webhooks } from "./Webhooks.js"

/**
 * The sync's settings: `TRACEBRIDGE_SYNC_HORIZON_DAYS` (365),
 * `TRACEBRIDGE_SYNC_POLL_INTERVAL_SECONDS` (300) and `TRACEBRIDGE_SYNC_TAKEOVER_SECONDS` (120).
 *
 * @since 0.1.0
 * @category config
 */
export const settings: Config.Config<Sync.Settings> = Config.all({
  horizonDays: Config.integer("TRACEBRIDGE_SYNC_HORIZON_DAYS").pipe(
    Config.validate({ message: "must be between 1 and 3650", validation: (n) => n >= 1 && n <= 3650 }),
    Config.withDefault(Sync.defaults.horizonDays)
  ),
  pollSeconds: Config.integer("TRACEBRIDGE_SYNC_POLL_INTERVAL_SECONDS").pipe(
    Config.validate({ message: "must be at least 10", validation: (n) => n >= 10 }),
    Config.withDefault(Sync.defaults.pollIntervalMs / 1000)
  ),
  takeoverSeconds: Config.integer("TRACEBRIDGE_SYNC_TAKEOVER_SECONDS").pipe(
    Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 }),
    Config.withDefault(Sync.defaults.takeoverMs / 1000)
  )
}).pipe(Config.map(({ horizonDays, pollSeconds, takeoverSeconds }) => ({
  ...Sync.defaults,
  horizonDays,
  pollIntervalMs: pollSeconds * 1000,
  takeoverMs: takeoverSeconds * 1000
})))

/** The events the managed sync queues. */
type SyncEvent = "sync.updates_available" | "connection.degraded"

/** A port whose reads run on the sandbox world current with the database (a no-op in production). */
const current = (
  port: ProviderPort.Service,
  read: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
): ProviderPort.Service => ({
  ...port,
  getFacility: (session, facilityId) => read(port.getFacility(session, facilityId)),
  changes: (resource, session, facilityId, range, page) =>
    read(port.changes(resource, session, facilityId, range, page)),
  departures: (resource, session, facilityId, range, page) =>
    read(port.departures(resource, session, facilityId, range, page))
})

const HostLive = Layer.effect(
  Sync.Host,
  Effect.gen(function*() {
    const connectionStore = yield* ConnectionStore
    const connections = yield* Connections
    const providers = yield* Providers
    const webhooks = yield* Webhooks
    const load = (connectionId: string) =>
      Effect.map(connectionStore.getConnection(connectionId), Option.filter((c: Connection) => c.status !== "inactive"))
    const event = <T extends SyncEvent>(connection: Connection, type: T, data: WebhookEvents.DataOf<T>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        webhooks.enqueue(
          connection.organisation_id,
          connection.id,
          WebhookEvents.make(type, WebhookEvents.envelope(Crypto.id("evt_"), now), data)
        ))
    /** Queues an event for the connection, unless it is gone or disconnected. */
    const emit = <T extends SyncEvent>(connectionId: string, type: T, data: WebhookEvents.DataOf<T>) =>
      Effect.flatMap(
        load(connectionId),
        (c) => Option.isNone(c) ? Effect.void : Effect.asVoid(event(c.value, type, data))
      )
    return Sync.Host.of({
      open: (connectionId) =>
        Effect.gen(function*() {
          const connection = yield* load(connectionId)
          if (Option.isNone(connection)) return Option.none()
          const port = yield* providers.port(connection.value.provider, connection.value.is_sandbox)
          if (Option.isNone(port)) return Option.none()
          const session = yield* providers.session(connection.value)
          const read = <A, E>(effect: Effect.Effect<A, E>) =>
            connection.value.is_sandbox ? providers.state.read(connection.value, effect) : effect
          return Option.some({ port: current(port.value, read), session })
        }),
      updatesAvailable: (connectionId, facilityId, changes) =>
        emit(connectionId, "sync.updates_available", {
          connection_id: Ids.ConnectionId.make(connectionId),
          facility_id: Ids.FacilityId.make(facilityId),
          changes
        }),
      degraded: (connectionId, facilityId, error) =>
        emit(connectionId, "connection.degraded", {
          connection_id: Ids.ConnectionId.make(connectionId),
          facility_id: Ids.FacilityId.make(facilityId),
          error
        }),
      loginRequired: (connectionId) =>
        Effect.flatMap(
          load(connectionId),
          (c) => Option.isNone(c) ? Effect.void : Effect.asVoid(connections.moveTo(c.value, "error"))
        ),
      backfilled: (connectionId) =>
        Effect.flatMap(load(connectionId), (c) =>
          Option.isNone(c) || c.value.status !== "pending"
            ? Effect.void
            : Effect.asVoid(connections.moveTo(c.value, "active")))
    })
  })
)

/**
 * Which facilities a connection has, for the sync (issue #28): the list its provider reports, as
 * `GET /v1/connections/{id}/facilities` answers it (`Providers.facilityIds`, kept a minute per
 * connection); none for a connection that is gone or disconnected.
 *
 * @since 0.1.0
 * @category layers
 */
export const RosterLive = Layer.effect(
  Sync.Roster,
  Effect.gen(function*() {
    const connectionStore = yield* ConnectionStore
    const providers = yield* Providers
    return Sync.Roster.of({
      facilities: (connectionId) =>
        Effect.gen(function*() {
          const connection = yield* connectionStore.getConnection(connectionId)
          if (Option.isNone(connection) || connection.value.status === "inactive") return Option.none()
          return Option.some(yield* providers.facilityIds(connection.value))
        })
    })
  })
)

/**
 * The sync's jobs and their engine, over the stores (the `Jobs` other services start).
 *
 * @since 0.1.0
 * @category layers
 */
export const JobsLive = Layer.effect(
  Jobs.Jobs,
  // the backfills a request starts run on after its answer, in the background: not in its log entry
  Effect.map(Jobs.Jobs, (jobs) =>
    Jobs.Jobs.of({
      ...jobs,
      start: (connectionId, facilityIds, options) =>
        RequestLogCapture.detached(jobs.start(connectionId, facilityIds, options))
    }))
).pipe(
  Layer.provide(Jobs.layer),
  Layer.provideMerge(Layer.effect(Sync.SyncSettings, Effect.orDie(settings))),
  Layer.provideMerge(WorkflowEngine.layerMemory),
  Layer.provide(RosterLive)
)

/**
 * The workflows' bodies, registered with the engine (needs the host's services).
 *
 * @since 0.1.0
 * @category layers
 */
export const WorkflowsLive = Jobs.workflowsLayer.pipe(Layer.provide(HostLive))

/**
 * The polls (needs the host's services, and the backfills to restart stalled ones).
 *
 * @since 0.1.0
 * @category layers
 */
export const PollsLive = Polls.layer.pipe(Layer.provide(HostLive), Layer.provide(RosterLive))

/**
 * The scheduler: every few seconds, due polls and stalled backfills (on the nodes that run the
 * workers), and once a minute the production connections whose sync never started
 * (`startUnsynced`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const scheduler = (every: Duration.DurationInput) =>
  Effect.flatMap(Polls.Polls, (polls) => {
    const backoff: StartBackoff = new Map()
    let nextStartCheck = 0
    /** At most once a minute: the production connections whose sync never started. */
    const startCheck = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (now < nextStartCheck) return Effect.void
      nextStartCheck = now + START_CHECK_EVERY_MS
      return Effect.asVoid(startUnsynced(now - START_CHECK_EVERY_MS, backoff))
    })
    return Effect.forever(Effect.zipRight(
      Effect.sleep(every),
      Effect.catchAllCause(
        Effect.zipRight(polls.tick, startCheck),
        (cause) => Effect.logError("sync scheduler", cause)
      )
    ))
  })

/** How often a node looks for production connections whose sync never started (ms). */
const START_CHECK_EVERY_MS = 60_000

/** The first and the longest wait before a node tries a failed start again (ms). */
const START_RETRY_FIRST_MS = 30_000
const START_RETRY_MAX_MS = 3_600_000

/**
 * A node's waits before it tries a connection's start again: the tries made, and when the next
 * may be (epoch ms). Each failure doubles the wait, from 30 s up to an hour.
 *
 * @since 0.1.0
 * @category models
 */
export type StartBackoff = Map<string, { readonly tries: number; readonly next: number }>

/**
 * Starts the sync of the production connections (`pending` or `active`, made before
 * `createdBefore`) that have no facility in it at all: the link's first facility list failed (the
 * state system did not answer in time, or the sync could not say which facilities the connection
 * has), so no backfill began, and nothing else would start one. Their facilities are listed again
 * (as background work, within the upstream deadline) and every one's backfill starts; the
 * connection becomes `active` when they are done. A connection whose list fails again waits
 * (`backoff`, per node) before its next try. Several nodes may start one connection together: a
 * start is idempotent (one row and one job per facility and generation). Answers how many
 * connections were started.
 *
 * @since 0.1.0
 * @category constructors
 */
export const startUnsynced = (createdBefore: number, backoff: StartBackoff) =>
  Effect.gen(function*() {
    const connections = yield* ConnectionStore
    const providers = yield* Providers
    const jobs = yield* Jobs.Jobs
    const now = yield* Clock.currentTimeMillis
    const found = yield* connections.unsyncedProduction(createdBefore, 20)
    const present = new Set(found.map((c) => c.id))
    for (const id of backoff.keys()) if (!present.has(id)) backoff.delete(id)
    let started = 0
    for (const connection of found) {
      const waiting = backoff.get(connection.id)
      if (waiting !== undefined && waiting.next > now) continue
      const listed = yield* Effect.either(
        UpstreamGovernor.background(Deadline.withBudget(providers.deadline)(providers.facilityIds(connection)))
      )
      if (Either.isRight(listed) && listed.right.size > 0) {
        yield* jobs.start(connection.id, [...listed.right])
        backoff.delete(connection.id)
        started++
        continue
      }
      const tries = (waiting?.tries ?? 0) + 1
      backoff.set(connection.id, {
        tries,
        next: now + Math.min(START_RETRY_MAX_MS, START_RETRY_FIRST_MS * 2 ** (tries - 1))
      })
      if (Either.isLeft(listed)) {
        yield* Effect.logWarning("sync: the start of a connection's sync failed; tried again later", {
          connectionId: connection.id,
          error: listed.left._tag,
          tries
        })
      }
    }
    return started
  })

/**
 * Polls every live facility of a sandbox connection after a change, in the background: the feed has the change shortly after the write answers, and
 * `sync.updates_available` says when.
 *
 * @since 0.1.0
 * @category constructors
 */
export const afterSandboxChange = (connectionId: string) =>
  Effect.gen(function*() {
    const polls = yield* Polls.Polls
    const store = yield* SyncStore.SyncStore
    const facilities = yield* store.facilities(connectionId)
    yield* Effect.forkDaemon(Effect.forEach(
      facilities.filter((f) => f.status !== "backfilling"),
      (f) => polls.pollNow(connectionId, f.facility_id),
      { discard: true }
    ))
  })

/**
 * After a sandbox reset: every facility is backfilled again (a new generation), which removes
 * from the feed what the reset took away.
 *
 * @since 0.1.0
 * @category constructors
 */
export const afterSandboxReset = (connectionId: string) =>
  Effect.gen(function*() {
    const jobs = yield* Jobs.Jobs
    const store = yield* SyncStore.SyncStore
    const facilities = yield* store.facilities(connectionId)
    yield* jobs.start(connectionId, facilities.map((f) => f.facility_id), { newGeneration: true })
  })

/** How often the scheduler looks for due work. */
export const SCHEDULER_EVERY = Duration.seconds(5)
