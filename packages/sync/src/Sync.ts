/**
 * The managed sync's steps, through the provider port into the `SyncStore`. It knows no
 * provider: the port says what a facility has (`capabilities`), and the descriptor how to walk it
 * (`syncWindowHours`: windows of modification time, or whole tables).
 *
 * - **Backfill** (`backfillResource`, then `finishBackfill`): one resource at a time, window after
 *   window from where the history starts (`Plan.startOf`) to when the backfill began, page after
 *   page. Each page is stored with the cursor of the next one (`SyncStore.apply`), so a stopped
 *   backfill resumes after its last stored page. When the last resource is done, objects an
 *   earlier generation stored and this one did not see are removed, and the facility is `live`.
 * - **Poll** (`pollFacility`): every live resource read from a little before where the last read
 *   stopped (the overlap covers the provider's whole-second markers and clock skew; a repeat adds
 *   no change). A whole-table provider is read whole, and what it no longer has is removed; a
 *   windowed one reports what left its lists in the same window (`ProviderPort.departures`:
 *   Metrc's inactive lists), and that is removed.
 *
 * Every upstream call of the sync runs as background work (`UpstreamGovernor.background`): the
 * governor admits it at its background share of the vendor key's rate, so that a `/v1` read or a
 * Connect login check never queues behind a backfill.
 *
 * Errors are the sync's own business: a refused login puts the facility in `error` and reports
 * `loginRequired`; other upstream failures are recorded, and after 15 minutes without a success
 * reported once as `degraded`.
 *
 * @since 0.1.0
 */
import type { Facility, Page, ProviderError, ProviderPort, Session } from "@tracebridge/core"
import { Resource, UpstreamGovernor } from "@tracebridge/core"
import { Clock, Context, Effect, Fiber, Option, Schedule } from "effect"
import * as Plan from "./Plan.js"
import type { ResourceState } from "./SyncStore.js"
import { SyncStore } from "./SyncStore.js"

/**
 * A connection opened for the sync: its port and session.
 *
 * @since 0.1.0
 * @category models
 */
export interface Opened {
  readonly port: ProviderPort.Service
  readonly session: Session.Session
}

/**
 * Where the sync gets a connection's port and session, and where it reports what happened (the
 * HTTP service provides it: webhooks, connection status).
 *
 * @since 0.1.0
 * @category models
 */
export interface HostService {
  /** The connection's port and session; none when it is gone or disconnected. */
  readonly open: (connectionId: string) => Effect.Effect<Option.Option<Opened>>
  /** New changes were stored for a facility (`sync.updates_available`). */
  readonly updatesAvailable: (connectionId: string, facilityId: string, changes: number) => Effect.Effect<void>
  /** The provider refused the login (`connection.login_required`; the connection moves to `error`). */
  readonly loginRequired: (connectionId: string) => Effect.Effect<void>
  /** The upstream has failed for 15 minutes (`connection.degraded`). */
  readonly degraded: (connectionId: string, facilityId: string, error: string) => Effect.Effect<void>
  /** Every facility of the connection finished its first backfill (the connection becomes `active`). */
  readonly backfilled: (connectionId: string) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Host extends Context.Tag("@tracebridge/sync/Host")<Host, HostService>() {}

/**
 * Which facilities a connection has (issue #28): the sync stores no other.
 *
 * @since 0.1.0
 * @category models
 */
export interface RosterService {
  /**
   * The ids of the connection's facilities as its provider lists them (the host may keep them a
   * while); none when the connection is gone or disconnected. Fails when the provider cannot say.
   */
  readonly facilities: (
    connectionId: string
  ) => Effect.Effect<Option.Option<ReadonlySet<string>>, ProviderError.ProviderError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Roster extends Context.Tag("@tracebridge/sync/Roster")<Roster, RosterService>() {}

/**
 * Whether a facility is one of the connection's: `true` or `false` when the roster says,
 * `undefined` when the provider could not say.
 *
 * @since 0.1.0
 * @category getters
 */
export const isListed = (
  roster: RosterService,
  connectionId: string
): Effect.Effect<(facilityId: string) => boolean | undefined> =>
  Effect.map(Effect.either(roster.facilities(connectionId)), (listed) => (facilityId: string) =>
    listed._tag === "Left"
      ? undefined
      : Option.isSome(listed.right) && listed.right.value.has(facilityId))

/**
 * The sync's settings (DECISIONS "Change feed and managed sync").
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  /** How far back a backfill reads (`TRACEBRIDGE_SYNC_HORIZON_DAYS`, 365). */
  readonly horizonDays: number
  /** Production poll interval in ms (`TRACEBRIDGE_SYNC_POLL_INTERVAL_SECONDS`, 300). */
  readonly pollIntervalMs: number
  /** Objects per port read (the adapter reads them in the provider's own pages). */
  readonly pageSize: number
  /** How far back a poll reaches before where the last one stopped. */
  readonly overlapMs: number
  /** How long the upstream may fail before `connection.degraded`. */
  readonly degradedAfterMs: number
  /** How long a backfill may store nothing before it is taken over (`TRACEBRIDGE_SYNC_TAKEOVER_SECONDS`, 120). */
  readonly takeoverMs: number
}

/**
 * @since 0.1.0
 * @category tags
 */
export class SyncSettings extends Context.Tag("@tracebridge/sync/SyncSettings")<SyncSettings, Settings>() {}

/**
 * The defaults.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: Settings = {
  horizonDays: 365,
  pollIntervalMs: 300_000,
  pageSize: 500,
  overlapMs: 60_000,
  degradedAfterMs: 15 * 60_000,
  takeoverMs: 120_000
}

const iso = (ms: number) => new Date(ms).toISOString()

/** How many port reads of a list a backfill keeps in flight ahead of its stores. */
const READ_AHEAD = 3

/** How many times a window is read again from its first page when its total moved under it. */
const MAX_WINDOW_RESTARTS = 3

/**
 * How often a backfill walking empty windows writes its cursor. An empty page stores nothing, so
 * its cursor may wait: after a restart, the empty windows since the last write are read again
 * (and store nothing again). Most of a Metrc history is empty windows, and a transaction each
 * cost a sandbox backfill most of its time; the write every few seconds (at most a quarter of
 * `takeoverMs`) keeps the backfill from looking stalled to the other nodes.
 */
const EMPTY_CURSOR_EVERY_MS = 5_000

type Outcome = "done" | "unavailable"

/** What a failed read means for the sync (a facility the provider does not know is not retried). */
const classify = (error: ProviderError.ProviderError): "login" | "unavailable" | "missing" | "transient" =>
  error._tag === "ProviderLoginRequired" || error._tag === "ProviderPermissionDenied"
    ? "login"
    : error._tag === "CapabilityNotEnabled" || error._tag === "UnsupportedState"
    ? "unavailable"
    : error._tag === "ResourceNotFound"
    ? "missing"
    : "transient"

/**
 * Runs a step again while it fails on something that passes (a throttle, an outage, a timeout):
 * every retry resumes from the stored cursor, so nothing is stored twice. Six retries, 2 s doubling
 * (about two minutes); then the failure is recorded and the scheduler takes the job up later.
 *
 * @since 0.1.0
 * @category steps
 */
export const retryTransient = <A, R>(
  effect: Effect.Effect<A, ProviderError.ProviderError, R>
): Effect.Effect<A, ProviderError.ProviderError, R> =>
  Effect.retry(effect, {
    while: (error) => classify(error) === "transient",
    schedule: Schedule.intersect(Schedule.exponential("2 seconds"), Schedule.recurs(6))
  })

const describe = (error: ProviderError.ProviderError): string =>
  `${error._tag}: ${"message" in error && typeof error.message === "string" ? error.message : ""}`.slice(0, 500)

/** The objects of a page, ready to store. */
const incoming = (items: ReadonlyArray<unknown>) =>
  items.map((item) => ({ object_id: (item as { readonly id: string }).id, body: JSON.stringify(item) }))

/**
 * The resources a connection's state offers; with a facility, only those its licence can have
 * (`Resource.Definition.facilityTag`): a dispensary's sync reads no plants, a grower's no sales, so
 * every poll makes fewer upstream requests.
 *
 * @since 0.1.0
 * @category getters
 */
export const resourcesOf = (
  opened: Opened,
  facility?: Pick<Facility.Facility, "capabilities">
): Effect.Effect<ReadonlyArray<Resource.Name>, ProviderError.ProviderError> =>
  Effect.map(
    UpstreamGovernor.background(opened.port.capabilities(opened.session.state)),
    (capabilities) =>
      Resource.names.filter((name) => {
        const definition = Resource.resources[name]
        if (!definition.enabled(capabilities)) return false
        // a licence without the resource's tag has none of it (a dispensary grows no plants)
        const tag = "facilityTag" in definition ? definition.facilityTag : undefined
        return facility === undefined || tag === undefined || facility.capabilities.includes(tag)
      })
  )

/**
 * Backfills one resource of a facility up to its target, from its cursor: the changes stored.
 *
 * @since 0.1.0
 * @category steps
 */
export const backfillResource = (
  opened: Opened,
  facility: Facility.Facility,
  connectionId: string,
  generation: number,
  resource: Resource.Name
): Effect.Effect<
  { readonly changes: number; readonly outcome: Outcome },
  ProviderError.ProviderError,
  SyncStore | SyncSettings
> =>
  Effect.gen(function*() {
    const store = yield* SyncStore
    const settings = yield* SyncSettings
    const now = yield* Clock.currentTimeMillis
    const fid = facility.id
    const existing = (yield* store.resources(connectionId, fid)).find((r) => r.resource === resource)
    if (existing !== undefined && existing.generation === generation && existing.status !== "backfilling") {
      return { changes: 0, outcome: existing.status === "unavailable" ? "unavailable" : "done" } as const
    }
    const state: ResourceState = existing !== undefined && existing.generation === generation ? existing : {
      connection_id: connectionId,
      facility_id: fid,
      resource,
      generation,
      status: "backfilling",
      target: now,
      window_from: null,
      page: 1,
      backfilled_through: null,
      synced_through: null,
      last_synced_at: null,
      count: existing?.count ?? 0,
      last_error: null
    }
    if (existing === undefined || existing.generation !== generation) yield* store.putResource(state)
    const target = state.target ?? now
    const start = Plan.startOf(target, settings.horizonDays, facility.license_start_date)
    const plan = Plan.windows(start, target, opened.port.descriptor.syncWindowHours)
    let changes = 0
    const read = (i: number, page: number) => {
      const window = plan[i]!
      const range = { from: window.from === null ? undefined : iso(window.from), to: iso(window.to) }
      return opened.port.changes(resource, opened.session, fid, range, { page, per_page: settings.pageSize }).pipe(
        Effect.map(Option.some),
        Effect.catchIf((e) => classify(e) === "unavailable", () => Effect.succeed(Option.none()))
      )
    }
    // Reads run ahead of the stores (READ_AHEAD in flight: the rest of a window's pages, then the
    // next windows' first pages), and are stored strictly in order, each with the cursor of the next.
    type Task = {
      readonly i: number
      readonly page: number
      fiber?: Fiber.RuntimeFiber<Option.Option<Page.Page<unknown>>, ProviderError.ProviderError>
    }
    const first = Plan.indexOf(plan, state.window_from)
    const queue: Array<Task> = first < plan.length
      ? [{ i: first, page: plan[first]!.from === state.window_from ? state.page : 1 }]
      : []
    let nextWindow = first + 1
    const totals = new Map<number, number>()
    const restarts = new Map<number, number>()
    let cursorWritten = now
    // well inside the takeover time, so that a backfill walking empty windows never looks stalled
    const emptyCursorEvery = Math.min(EMPTY_CURSOR_EVERY_MS, settings.takeoverMs / 4)
    const fill = Effect.gen(function*() {
      while (queue.length < READ_AHEAD && nextWindow < plan.length) queue.push({ i: nextWindow++, page: 1 })
      for (const task of queue.slice(0, READ_AHEAD)) {
        if (task.fiber === undefined) task.fiber = yield* Effect.forkScoped(read(task.i, task.page))
      }
    })
    yield* Effect.scoped(Effect.gen(function*() {
      while (queue.length > 0) {
        yield* fill
        const task = queue.shift()!
        const result = yield* Fiber.join(task.fiber!)
        if (Option.isNone(result)) {
          yield* store.putResource({ ...state, status: "unavailable", target: null, last_error: null })
          return
        }
        const { i, page } = task
        const window = plan[i]!
        const { items, pagination } = result.value
        const seen = totals.get(i)
        // An object that changed while the window was read leaves it (a later window or the poll
        // reads it), and the pages after it shift: read the window again from its first page.
        if (seen !== undefined && pagination.total !== seen && (restarts.get(i) ?? 0) < MAX_WINDOW_RESTARTS) {
          restarts.set(i, (restarts.get(i) ?? 0) + 1)
          totals.delete(i)
          const stale = queue.filter((t) => t.i === i)
          for (const t of stale) if (t.fiber !== undefined) yield* Fiber.interrupt(t.fiber)
          queue.splice(0, queue.length, { i, page: 1 }, ...queue.filter((t) => t.i !== i))
          continue
        }
        if (seen === undefined) {
          totals.set(i, pagination.total)
          // the window's other pages go next, ahead of the next windows
          const pages = Math.ceil(pagination.total / settings.pageSize)
          const queued = new Set(queue.filter((t) => t.i === i).map((t) => t.page))
          const rest: Array<Task> = []
          for (let p = page + 1; p <= pages; p++) if (!queued.has(p)) rest.push({ i, page: p })
          queue.unshift(...rest)
        }
        const more = page * settings.pageSize < pagination.total
        const last = !more && i === plan.length - 1
        const stamp = yield* Clock.currentTimeMillis
        if (items.length === 0 && !last && stamp - cursorWritten < emptyCursorEvery) continue
        cursorWritten = stamp
        changes += yield* store.apply({
          connection_id: connectionId,
          facility_id: fid,
          resource,
          generation,
          objects: incoming(items),
          sweep: last,
          now: stamp,
          cursor: more
            ? { window_from: window.from, page: page + 1, backfilled_through: window.from, last_error: null }
            : last
            ? {
              status: "live",
              target: null,
              window_from: null,
              page: 1,
              backfilled_through: target,
              synced_through: target,
              last_synced_at: stamp,
              last_error: null
            }
            : { window_from: plan[i + 1]!.from, page: 1, backfilled_through: window.to, last_error: null }
        })
      }
    }))
    const after = (yield* store.resources(connectionId, fid)).find((r) => r.resource === resource)
    if (after?.status === "unavailable") return { changes, outcome: "unavailable" } as const
    return { changes, outcome: "done" } as const
  }).pipe(
    Effect.tap((r) =>
      Effect.annotateCurrentSpan({ "tracebridge.changes": r.changes, "tracebridge.outcome": r.outcome })
    ),
    // one span per backfill step: a resource of a facility (issue #32)
    Effect.withSpan("sync.backfill", {
      captureStackTrace: false,
      attributes: {
        provider: opened.session.provider,
        state: opened.session.state,
        connection_id: connectionId,
        facility_id: facility.id,
        resource,
        generation
      }
    }),
    UpstreamGovernor.background
  )

/**
 * Ends a facility's backfill: `live`, with the earliest point every resource reached.
 *
 * @since 0.1.0
 * @category steps
 */
export const finishBackfill = (connectionId: string, facilityId: string) =>
  Effect.gen(function*() {
    const store = yield* SyncStore
    const settings = yield* SyncSettings
    const now = yield* Clock.currentTimeMillis
    const resources = (yield* store.resources(connectionId, facilityId)).filter((r) => r.status === "live")
    const through = resources.length === 0 ? now : Math.min(...resources.map((r) => r.backfilled_through ?? now))
    yield* store.updateFacility(connectionId, facilityId, {
      status: "live",
      backfilled_through: through,
      last_synced_at: now,
      next_poll_at: now + settings.pollIntervalMs,
      failing_since: null,
      degraded_notified: false,
      last_error: null
    })
  })

/**
 * Records a failed step: `error` and `loginRequired` for a refused login, else the error and,
 * after `degradedAfterMs` of failures, `degraded` once.
 *
 * @since 0.1.0
 * @category steps
 */
export const recordFailure = (connectionId: string, facilityId: string, error: ProviderError.ProviderError) =>
  Effect.gen(function*() {
    const store = yield* SyncStore
    const host = yield* Host
    const settings = yield* SyncSettings
    const now = yield* Clock.currentTimeMillis
    const state = yield* store.facility(connectionId, facilityId)
    if (Option.isNone(state)) return
    const message = describe(error)
    if (classify(error) === "login") {
      yield* store.updateFacility(connectionId, facilityId, { status: "error", last_error: message })
      yield* host.loginRequired(connectionId)
      return
    }
    const since = state.value.failing_since ?? now
    const degraded = now - since >= settings.degradedAfterMs && !state.value.degraded_notified
    yield* store.updateFacility(connectionId, facilityId, {
      failing_since: since,
      last_error: message,
      ...(degraded ? { degraded_notified: true } : {})
    })
    if (degraded) yield* host.degraded(connectionId, facilityId, message)
  })

/** Every id the port reports as having left a list within the range (all its pages). */
const departures = (
  opened: Opened,
  resource: Resource.Name,
  facilityId: string,
  range: ProviderPort.ChangeRange,
  pageSize: number
): Effect.Effect<ReadonlyArray<string>, ProviderError.ProviderError> =>
  Effect.gen(function*() {
    const ids: Array<string> = []
    for (let page = 1;; page++) {
      const read = yield* opened.port.departures(resource, opened.session, facilityId, range, {
        page,
        per_page: pageSize
      })
      ids.push(...read.items)
      if (page * pageSize >= read.pagination.total) return ids
    }
  })

/**
 * One incremental pass over a live facility: the changes stored.
 *
 * @since 0.1.0
 * @category steps
 */
export const pollFacility = (
  opened: Opened,
  connectionId: string,
  facilityId: string
): Effect.Effect<number, ProviderError.ProviderError, SyncStore | SyncSettings> =>
  Effect.gen(function*() {
    const store = yield* SyncStore
    const settings = yield* SyncSettings
    const state = yield* store.facility(connectionId, facilityId)
    if (Option.isNone(state) || state.value.status === "backfilling") return 0
    const whole = opened.port.descriptor.syncWindowHours === undefined
    let changes = 0
    for (const r of yield* store.resources(connectionId, facilityId)) {
      if (r.status !== "live" && r.status !== "error") continue
      const resource = r.resource as Resource.Name
      const until = yield* Clock.currentTimeMillis
      const from = r.synced_through === null ? undefined : iso(Math.max(0, r.synced_through - settings.overlapMs))
      const range = { from: whole ? undefined : from, to: iso(until) }
      const seen = new Set<string>()
      const pages: Array<ReadonlyArray<unknown>> = []
      for (let page = 1;; page++) {
        const read = yield* opened.port.changes(resource, opened.session, facilityId, range, {
          page,
          per_page: settings.pageSize
        })
        for (const item of read.items) seen.add((item as { readonly id: string }).id)
        pages.push(read.items)
        if (page * settings.pageSize >= read.pagination.total) break
      }
      // what left the list: gone from a whole read, or reported as a departure in the window
      const gone = whole
        ? yield* store.ids(connectionId, facilityId, resource)
        : yield* departures(opened, resource, facilityId, range, settings.pageSize)
      const removed = gone.filter((id) => !seen.has(id))
      const stamp = yield* Clock.currentTimeMillis
      changes += yield* store.apply({
        connection_id: connectionId,
        facility_id: facilityId,
        resource,
        generation: state.value.generation,
        objects: incoming(pages.flat()),
        removed,
        now: stamp,
        cursor: { status: "live", synced_through: until, last_synced_at: stamp, last_error: null }
      })
    }
    const now = yield* Clock.currentTimeMillis
    yield* store.updateFacility(connectionId, facilityId, {
      status: "live",
      last_synced_at: now,
      failing_since: null,
      degraded_notified: false,
      last_error: null
    })
    return changes
  }).pipe(
    Effect.tap((changes) => Effect.annotateCurrentSpan("tracebridge.changes", changes)),
    // one span per poll (issue #32)
    Effect.withSpan("sync.poll", {
      captureStackTrace: false,
      attributes: {
        provider: opened.session.provider,
        state: opened.session.state,
        connection_id: connectionId,
        facility_id: facilityId
      }
    }),
    UpstreamGovernor.background
  )
