import { CurrentPrincipal } from "@tracebridge/api/Security"
import type { ProviderError, ProviderPort, Session, WebhookEvent } from "@tracebridge/core"
import { Ids, ProviderName, WebhookEvent as WebhookEvents } from "@tracebridge/core"
import { SyncStore } from "@tracebridge/sync"
import { Clock, Effect, Either, Option } from "effect"
import * as Errors from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import type { Connection } from "../persistence/ConnectionStore.js"
import { Transactions } from "../persistence/Transactions.js"
import { Connections } from "../services/Connections.js"
import * as Crypto from "../services/Crypto.js"
import * as ManagedSync from "../services/ManagedSync.js"
import { Providers } from "../services/Providers.js"
import { Webhooks } from "../services/Webhooks.js"

/**
 * The webhook event a sandbox write announces (a lab result's `lab_result.received`), built from
 * what it wrote, the connection, the event's id and the time.
 */
export type Announce<A> = (
  written: A,
  connection: Connection,
  envelope: WebhookEvent.Envelope
) => WebhookEvent.WebhookEvent

/** A provider call for a connection. */
type Call<A> = (
  port: ProviderPort.Service,
  session: Session.Session,
  connection: Connection
) => Effect.Effect<A, ProviderError.ProviderError>

/**
 * A connection the caller may read: theirs, not disconnected, and within their plan.
 */
export const reachable = (connectionId: string) =>
  Effect.gen(function*() {
    const principal = yield* CurrentPrincipal
    const connections = yield* Connections
    const connection = yield* connections.authorize(principal, connectionId)
    if (connection.status === "inactive") {
      return yield* Errors.fail(
        "conflict_error",
        "connection_inactive",
        "This connection was disconnected; link it again"
      )
    }
    if (!connection.is_sandbox && !principal.scopes.includes("production")) {
      return yield* Errors.fail(
        "permission_error",
        "plan_not_enabled",
        "Production connections need the production plan"
      )
    }
    yield* Idempotency.authorised
    return connection
  })

/**
 * Runs a provider call for a connection the caller may reach: authorises it, runs the call within
 * the request's upstream deadline (`Providers.upstream`), on a sandbox world current with the
 * database (`SandboxState`: a `write` stores what it changed, or answers 409 after conflicts),
 * and maps provider errors to the wire (a refused login moves the connection to `error`; a
 * throttle or a timeout gets `Retry-After`).
 */
export const withConnection = <A>(
  connectionId: string,
  call: Call<A>,
  mode: "read" | "write" = "read"
) => Effect.flatMap(reachable(connectionId), (connection) => callOn(connection, call, mode))

/**
 * `withConnection` for a connection already checked with `reachable`.
 */
export const callOn = <A>(
  connection: Connection,
  call: Call<A>,
  mode: "read" | "write" = "read",
  /** For a sandbox write: the event it announces, stored with its changes (as a scenario's is). */
  announce?: Announce<A>
) =>
  Effect.gen(function*() {
    const providers = yield* Providers
    const port = yield* providers.port(connection.provider, connection.is_sandbox)
    if (Option.isNone(port)) {
      return yield* Errors.fail("api_error", "internal_error", `No port for ${connection.provider}`)
    }
    const session = yield* providers.session(connection)
    const upstream = providers.upstream(connection.provider, call(port.value, session, connection))
    const webhooks = yield* Webhooks
    const transactions = yield* Transactions
    const result = yield* (mode === "write"
      ? providers.state.write(connection, (commit) =>
        Effect.gen(function*() {
          const written = yield* Effect.either(upstream)
          if (Either.isLeft(written) || announce === undefined || !connection.is_sandbox) return written
          // the changes and the event are stored together: no event is lost, none is sent twice
          const at = yield* Clock.currentTimeMillis
          const event = announce(written.right, connection, {
            id: WebhookEvents.EventId.make(Crypto.id("evt_")),
            created: new Date(at).toISOString()
          })
          yield* Effect.uninterruptible(Effect.flatMap(
            transactions.transaction(
              Effect.zipRight(commit, webhooks.enqueueAndSend(connection.organisation_id, connection.id, event))
            ),
            ({ send }) => send
          ))
          return written
        }))
      : providers.state.read(connection, Effect.either(upstream)))
    if (result._tag === "Right") {
      if (mode === "write" && connection.is_sandbox) yield* ManagedSync.afterSandboxChange(connection.id)
      return { value: result.right, connection }
    }
    return yield* refused(connection, result.left)
  })

/** A provider error on the wire (a refused login moves the connection to `error` first). */
export const refused = (connection: Connection, error: ProviderError.ProviderError) =>
  Effect.gen(function*() {
    if (error._tag === "ProviderLoginRequired") yield* (yield* Connections).moveTo(connection, "error")
    return yield* Effect.flatMap(Errors.fromProviderError(error), Effect.fail)
  })

/**
 * Checks that a facility is one of the connection's (issue #28): an id that is not a facility id
 * of the connection's provider, or that its provider does not list for the connection (the list
 * `GET /v1/connections/{id}/facilities` answers, kept per connection: `Providers.facilityIds`),
 * is 404 `resource_not_found`. A facility of the list kept in memory passes at once (no decoding,
 * no database read); else a facility the sync has backfilled (`live`: its backfill read the facility from the
 * provider) is known without asking again. Every facility-level path runs it
 * first, `/changes` included.
 */
export const ownFacility = (
  connection: Connection,
  facilityId: string,
  /** The facility's sync row, when the caller has read it already. */
  known?: Option.Option<SyncStore.FacilityState>
) =>
  Effect.gen(function*() {
    const providers = yield* Providers
    // the connection's facility list kept in memory answers first (the provider's own ids): no
    // decoding and no database read per request
    if (known === undefined && providers.cachedFacilityIds(connection)?.has(facilityId) === true) return
    const notFound = Errors.fail("not_found_error", "resource_not_found", `No facility with id ${facilityId}`)
    if (
      !ProviderName.isProviderName(connection.provider) ||
      Option.isNone(Ids.decodeAs("facility", connection.provider, facilityId))
    ) return yield* notFound
    const synced = known ?? (yield* (yield* SyncStore.SyncStore).facility(connection.id, facilityId))
    if (Option.isSome(synced) && synced.value.status === "live" && synced.value.backfilled_through !== null) return
    const ids = yield* Effect.either(providers.facilityIds(connection))
    if (Either.isLeft(ids)) return yield* refused(connection, ids.left)
    if (!ids.right.has(facilityId)) return yield* notFound
  })

/**
 * `reachable`, then `ownFacility`: a facility-level path's connection.
 */
export const reachableFacility = (connectionId: string, facilityId: string) =>
  Effect.tap(reachable(connectionId), (connection) => ownFacility(connection, facilityId))
