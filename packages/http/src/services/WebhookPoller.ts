/**
 * Events for production connections. State systems push nothing, so a poller reconciles each
 * active production connection's transfer and lab-result lists against what it saw last (a
 * snapshot in `poll_snapshots`) and emits the events simulate fires in the sandbox:
 * `transfer.arrived` when a transfer's `actual_arrival` appears, `transfer.completed` when its
 * status becomes `received` or `rejected`, `lab_result.received` for a lab result not seen before.
 * The first poll of a connection records a baseline and emits nothing; the next ones read only
 * what changed since the last poll (`updated_since`, with a margin) and lay it over the snapshot.
 *
 * Several API processes run the poller: each connection due is claimed in the database
 * (`poll_claims`) until the end of the interval, so one node polls it and the others skip it. A
 * node that stops mid-poll leaves its claim to lapse; the next interval's claimant polls from the
 * stored snapshot. The snapshot is also stored with compare-and-set, so only the first poll to
 * finish queues the events of a change, whatever happens.
 *
 * It is gentle with providers: one connection at a time, one request at a time, each connection at
 * most once per interval (`TRACEBRIDGE_POLL_INTERVAL_SECONDS`, default 900), on top of the
 * adapters' own pacing and `Retry-After` handling, as background work (`UpstreamGovernor.background`:
 * admitted at the background share of the vendor key's rate, beside interactive calls). A connection whose provider fails is skipped
 * until the next interval with its snapshot unchanged, so nothing is missed, only late.
 *
 * @since 0.1.0
 */
import type { LabResult, ProviderError, ProviderPort, Session, Transfer, WebhookEvent } from "@tracebridge/core"
import { Ids, LabResult as LabResults, UpstreamGovernor, WebhookEvent as WebhookEvents } from "@tracebridge/core"
import { SyncStore } from "@tracebridge/sync"
import { Clock, Context, Data, Duration, Effect, Layer, Option } from "effect"
import { Accounts } from "../persistence/Accounts.js"
import type { Connection } from "../persistence/ConnectionStore.js"
import { ConnectionStore } from "../persistence/ConnectionStore.js"
import { Transactions } from "../persistence/Transactions.js"
import { WebhookStore } from "../persistence/WebhookStore.js"
import * as Crypto from "./Crypto.js"
import { Providers } from "./Providers.js"
import { Webhooks } from "./Webhooks.js"

/**
 * How far before the last poll an incremental poll starts reading: the provider's whole-second
 * lastModified markers, clock skew between it and the nodes, and a change committed upstream while
 * the last poll read. A change read twice is no event twice: events come from the snapshot's diff.
 */
const OVERLAP_MS = 10 * 60_000

/** A snapshot older than this (a connection paused, a long outage) is replaced by a whole read. */
const INCREMENTAL_FOR_MS = 7 * 86_400_000

/** A facility of the connection, as the poller reads it. */
type FacilityOf = { readonly id: Ids.FacilityId; readonly license_number: string }

/** Another process stored a poll of the connection while this one ran: its events are dropped. */
class PollRaced extends Data.TaggedError("PollRaced")<{}> {}

/**
 * What the poller remembers of a connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  /** Transfer id → whether it had arrived, and its status. */
  readonly transfers: Readonly<Record<string, { readonly arrived: boolean; readonly status: string }>>
  readonly lab_results: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Polls one connection through `port`/`session` (tests pass the sandbox's, as if production):
   * the events queued (and how many deliveries).
   */
  readonly reconcile: (
    connection: Connection,
    port: ProviderPort.Service,
    session: Session.Session
  ) => Effect.Effect<ReadonlyArray<WebhookEvent.WebhookEvent>, ProviderError.ProviderError>
  /** Polls every active production connection that is due. */
  readonly runDue: (interval: Duration.Duration) => Effect.Effect<number>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class WebhookPoller extends Context.Tag("Webhooks/Poller")<WebhookPoller, Service>() {}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(
  WebhookPoller,
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const connectionStore = yield* ConnectionStore
    const transactions = yield* Transactions
    const webhookStore = yield* WebhookStore
    const webhooks = yield* Webhooks
    const providers = yield* Providers
    const syncStore = yield* SyncStore.SyncStore

    /**
     * When the synced store can give a connection's baseline: every facility has its transfers and
     * lab results live there. Then the time up to which the store holds every change of them (the
     * earliest `synced_through`). The baseline's own reads of those lists upstream, whole from the
     * licence start (hundreds of GETs a connection), are then not needed: the sync made them
     * already (issue #35, bench row 14).
     */
    const storedThrough = (connectionId: string, facilities: ReadonlyArray<FacilityOf>) =>
      Effect.gen(function*() {
        let asOf = Number.POSITIVE_INFINITY
        for (const facility of facilities) {
          const states = yield* syncStore.resources(connectionId, facility.id)
          for (const resource of ["transfers", "lab_results"]) {
            const state = states.find((r) => r.resource === resource)
            if (state === undefined || state.status !== "live" || state.synced_through === null) return Option.none()
            asOf = Math.min(asOf, state.synced_through)
          }
        }
        return Number.isFinite(asOf) ? Option.some(asOf) : Option.none()
      })

    /** A list of a facility as the sync stored it (each body the object its GET answers). */
    const storedList = <A>(connectionId: string, facilityId: string, resource: string) =>
      Effect.map(syncStore.list(connectionId, facilityId, resource), (bodies) => bodies.map((b) => JSON.parse(b) as A))

    const reconcile: Service["reconcile"] = (connection, port, session) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const facilities: Array<FacilityOf> = []
        for (let page = 1;; page++) {
          const p = yield* port.listFacilities(session, { page, per_page: 100 })
          facilities.push(...p.items)
          if (p.items.length < 100 || facilities.length >= p.pagination.total) break
        }
        const stored = yield* webhookStore.getPollSnapshot(connection.id)
        // After the baseline, only what changed since the last poll (less a margin) is read: the
        // whole lists of every facility each interval cost hundreds of upstream requests per
        // facility (a 24 h window each, from the licence start), more than a deployment's vendor key
        // allows for a thousand facilities (issue #35, bench row 14). A snapshot too old is read whole.
        const since = Option.match(stored, {
          onNone: () => undefined,
          onSome: (s) =>
            now - s.polled_at <= INCREMENTAL_FOR_MS ? new Date(s.polled_at - OVERLAP_MS).toISOString() : undefined
        })
        const query = since === undefined ? {} : { updated_since: since }
        const transfers = new Map<string, { readonly transfer: Transfer.Transfer; readonly facility: Ids.FacilityId }>()
        const results = new Map<string, { readonly result: LabResult.LabResult; readonly facility: Ids.FacilityId }>()
        // A baseline of a connection the sync holds live is read from the store, and stamped with
        // the time the store holds every change up to: the next poll reads from 10 minutes before
        // it, so a change the store had not seen yet is reported then.
        const fromStore = since === undefined ? yield* storedThrough(connection.id, facilities) : Option.none()
        const polledAt = Option.match(fromStore, { onNone: () => now, onSome: (asOf) => Math.min(now, asOf) })
        for (const facility of facilities) {
          const [listed, tested] = Option.isSome(fromStore)
            ? [
              yield* storedList<Transfer.Transfer>(connection.id, facility.id, "transfers"),
              yield* storedList<LabResult.LabResult>(connection.id, facility.id, "lab_results")
            ]
            : [
              yield* port.listAll("transfers", session, facility.id, query),
              yield* port.listAll("lab_results", session, facility.id, query)
            ]
          for (const t of listed) {
            // A transfer between two of the connection's facilities is reported once, for its recipient.
            const known = transfers.get(t.id)
            if (known === undefined || t.recipient_facility === facility.license_number) {
              transfers.set(t.id, { transfer: t, facility: facility.id })
            }
          }
          for (const r of tested) {
            if (!results.has(r.id)) results.set(r.id, { result: r, facility: facility.id })
          }
        }
        const previous = Option.map(stored, (s) => JSON.parse(s.snapshot) as Snapshot)
        // a whole read replaces the snapshot; a read of the changes is laid over it
        const kept = since === undefined ? undefined : Option.getOrUndefined(previous)
        const next: Snapshot = {
          transfers: {
            ...kept?.transfers,
            ...Object.fromEntries(
              [...transfers.values()].map(({ transfer }) => [transfer.id, {
                arrived: transfer.actual_arrival !== null,
                status: transfer.status
              }])
            )
          },
          lab_results: [...new Set([...(kept?.lab_results ?? []), ...results.keys()])].sort()
        }
        const events: Array<WebhookEvent.WebhookEvent> = []
        if (Option.isSome(previous)) {
          const last = previous.value
          const seen = new Set(last.lab_results)
          const envelope = () => WebhookEvents.envelope(Crypto.id("evt_"), now)
          const connectionId = Ids.ConnectionId.make(connection.id)
          for (const { facility, transfer } of transfers.values()) {
            const before = last.transfers[transfer.id]
            const data = { id: transfer.id, connection_id: connectionId, facility_id: facility, transfer }
            if (transfer.actual_arrival !== null && before?.arrived !== true) {
              events.push(WebhookEvents.make("transfer.arrived", envelope(), data))
            }
            const done = transfer.status === "received" || transfer.status === "rejected"
            if (done && before?.status !== transfer.status) {
              events.push(WebhookEvents.make("transfer.completed", envelope(), data))
            }
          }
          for (const { facility, result } of results.values()) {
            if (seen.has(result.id)) continue
            const pkg = yield* Effect.option(port.get("packages", session, facility, result.package_id))
            events.push(WebhookEvents.make("lab_result.received", envelope(), {
              id: result.id,
              connection_id: connectionId,
              facility_id: facility,
              package_id: result.package_id,
              package_tag: Option.match(pkg, { onNone: () => "", onSome: (p) => p.tag }),
              passed: result.overall_passed,
              failed_panel: [...LabResults.failedPanel(result)],
              lab_result: result
            }))
          }
        }
        // The events and the snapshot that produced them are stored together, only if no other
        // process stored a poll of this connection since ours began (it reported these changes).
        const recorded = yield* transactions.transaction(Effect.gen(function*() {
          for (const event of events) yield* webhooks.enqueue(connection.organisation_id, connection.id, event)
          const kept = yield* webhookStore.putPollSnapshot(
            { connection_id: connection.id, snapshot: JSON.stringify(next), polled_at: polledAt },
            Option.match(stored, { onNone: () => null, onSome: (s) => s.polled_at })
          )
          if (!kept) return yield* Effect.fail(new PollRaced())
        })).pipe(Effect.as(true), Effect.catchTag("PollRaced", () => Effect.succeed(false)))
        return recorded ? events : []
      }).pipe(
        Effect.withSpan("WebhookPoller.reconcile", {
          captureStackTrace: false,
          attributes: { connection: connection.id }
        }),
        // background work: the governor keeps room beside it for interactive calls
        UpstreamGovernor.background
      )

    const runDue: Service["runDue"] = (interval) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        let polled = 0
        for (const organisation of yield* accounts.listOrganisations()) {
          const { items } = yield* connectionStore.listConnections(organisation.id, 0, 10_000)
          for (const connection of items) {
            if (connection.is_sandbox || connection.status !== "active") continue
            const last = yield* webhookStore.getPollSnapshot(connection.id)
            if (Option.isSome(last) && last.value.polled_at + Duration.toMillis(interval) > now) continue
            // one node polls it this interval: the one that claims it (the others skip it)
            if (!(yield* webhookStore.claimPoll(connection.id, now, now + Duration.toMillis(interval)))) continue
            const port = yield* providers.port(connection.provider, false)
            if (Option.isNone(port)) continue
            const session = yield* providers.session(connection)
            yield* reconcile(connection, port.value, session).pipe(
              Effect.catchAll((error) =>
                Effect.logWarning(`poll of ${connection.id} skipped until the next interval`, error._tag)
              )
            )
            polled++
          }
        }
        return polled
      })

    return { reconcile, runDue }
  })
)
