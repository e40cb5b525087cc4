/**
 * What `/v1/sandbox` does, as functions of the caller (DECISIONS "Simulate", issue #33): a sandbox
 * public token without the widget (`POST /v1/sandbox/public_token/create`), and on a sandbox
 * connection: run a scenario (`…/simulate`), reset it, and set, read and clear its upstream fault.
 *
 * The `/v1` handlers (`SandboxHttp.ts`, `LinkHttp.ts`) call them with the request's principal; the
 * dashboard's Sandbox page calls the same functions as the member's organisation
 * (`Dashboard.actAs`), so both answer alike: the same checks, errors, webhook events, sync
 * notifications and status moves.
 *
 * @since 0.1.0
 */
import type { Fault as CoreFault } from "@tracebridge/core"
import { WebhookEvent } from "@tracebridge/core"
import type { Faults, World } from "@tracebridge/sandbox"
import { Registry, Scenario } from "@tracebridge/sandbox"
import { Clock, Effect, Either, Option } from "effect"
import * as Errors from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import type { Connection } from "../persistence/ConnectionStore.js"
import { Transactions } from "../persistence/Transactions.js"
import * as Auth from "./Auth.js"
import type { Principal } from "./Auth.js"
import { Connections } from "./Connections.js"
import * as ManagedSync from "./ManagedSync.js"
import { Providers } from "./Providers.js"
import { Webhooks } from "./Webhooks.js"

/**
 * An answer and the envelope's `meta` (the connection's provider and state).
 *
 * @since 0.1.0
 * @category models
 */
export interface Answer<A> {
  readonly data: A
  readonly meta: { readonly provider: string; readonly state: string }
}

const answer = <A>(data: A, on: { readonly provider: string; readonly state: string }): Answer<A> => ({
  data,
  meta: { provider: on.provider, state: on.state }
})

const scenarioError = (failure: Scenario.Failure) =>
  failure._tag === "UnknownScenario"
    ? Errors.fail("validation_error", "unknown_scenario", failure.message, "scenario")
    : failure._tag === "InvalidInput"
    ? Errors.fail(
      "validation_error",
      "invalid_parameter",
      failure.message,
      failure.path === "" ? "params" : `params.${failure.path}`
    )
    : failure._tag === "Exhausted"
    ? Errors.fail("invalid_request_error", "scenario_exhausted", failure.message)
    : Effect.flatMap(Errors.fromProviderError(failure), Effect.fail)

/**
 * A connection in `error` whose login the world accepts again (its fault cleared, or the world
 * reset) is `active` again (issue #30); one the world still refuses stays in `error`.
 */
const recover = (connection: Connection) =>
  Effect.gen(function*() {
    if (connection.status !== "error") return
    const providers = yield* Providers
    const port = yield* providers.port(connection.provider, true)
    if (Option.isNone(port)) return
    // one small read of the world as it is now (not the kept facility list)
    const session = yield* providers.session(connection)
    const answered = yield* Effect.either(
      providers.upstream(connection.provider, port.value.listFacilities(session, { page: 1, per_page: 1 }))
    )
    if (Either.isRight(answered)) yield* (yield* Connections).moveTo(connection, "active")
  })

/**
 * A sandbox connection of the caller that is not disconnected (checked before any idempotency key
 * is claimed): another organisation's is 404, a production one 403 `sandbox_only`.
 *
 * @since 0.1.0
 * @category checks
 */
export const sandboxConnection = (principal: Principal, connectionId: string, what: string) =>
  Effect.gen(function*() {
    const connections = yield* Connections
    const connection = yield* connections.authorize(principal, connectionId)
    if (!connection.is_sandbox) {
      return yield* Errors.fail(
        "permission_error",
        "sandbox_only",
        `${what} runs on sandbox connections only; production data and events come from the state system`
      )
    }
    if (connection.status === "inactive") {
      return yield* Errors.fail("conflict_error", "connection_inactive", "This connection was disconnected")
    }
    yield* Idempotency.authorised
    return connection
  })

/**
 * The event a sandbox connection receives for a scenario's change: the change in the connection's
 * envelope, with an id made from the world and the connection's sandbox version (raised by every
 * committed change and every reset, so that no id is delivered twice) and the scenario's time.
 */
const eventOf = (
  connection: { readonly id: string },
  world: World.World,
  version: number,
  at: number,
  change: WebhookEvent.Change
): WebhookEvent.WebhookEvent =>
  WebhookEvent.wrap(change, WebhookEvent.envelope(Scenario.eventId(world, version), at), connection.id)

/**
 * `POST /v1/sandbox/{id}/simulate`: runs a scenario on the connection's world and queues the event
 * it fires. The change, its event and any fault it switches on are stored together before the
 * answer; a scenario that refuses the login moves the connection to `error`; the sync is told.
 *
 * @since 0.1.0
 * @category actions
 */
export const simulate = (
  principal: Principal,
  connectionId: string,
  payload: { readonly scenario: string; readonly params?: Readonly<Record<string, unknown>> | undefined }
) =>
  Effect.gen(function*() {
    const connections = yield* Connections
    const providers = yield* Providers
    const webhooks = yield* Webhooks
    const transactions = yield* Transactions
    const connection = yield* sandboxConnection(principal, connectionId, "Simulate")
    const at = yield* Clock.currentTimeMillis
    // Once committed, the deliveries go straight to this process's worker (or it is woken); not
    // interrupted in between, so that they never wait for their lease to lapse.
    const { deliveries, event, outcome } = yield* providers.state.write(connection, (commit, version) =>
      Effect.gen(function*() {
        const world = providers.state.world(connection)
        const result = providers.sandbox.apply<Scenario.Outcome, Scenario.Failure>(world, {
          _tag: "Scenario",
          input: { name: payload.scenario, params: payload.params ?? {}, at }
        })
        if (Either.isLeft(result)) {
          return yield* scenarioError(result.left)
        }
        const outcome = result.right
        // the sandbox answers the change; the connection's envelope is put round it here
        const event = outcome.change === null ? null : eventOf(connection, world, version, at, outcome.change)
        const deliveries = yield* Effect.uninterruptible(Effect.flatMap(
          transactions.transaction(
            Effect.zipRight(
              Effect.zipRight(
                commit,
                outcome.fault === undefined ? Effect.void : providers.state.setFault(connection, outcome.fault)
              ),
              event === null
                ? Effect.succeed({ deliveries: 0, send: Effect.void })
                : webhooks.enqueueAndSend(connection.organisation_id, connection.id, event)
            )
          ),
          ({ deliveries, send }) =>
            Effect.as(send, deliveries)
        ))
        return { deliveries, event, outcome }
      }))
    if (outcome.loginRequired) {
      yield* connections.moveTo(connection, "error")
    }
    yield* ManagedSync.afterSandboxChange(connection.id)
    return answer({ scenario: outcome.scenario, event, deliveries }, connection)
  })

/**
 * `POST /v1/sandbox/{id}/reset`: the world back at its seed, its fault cleared; the sync reads it
 * again, and a connection in `error` whose login works again is `active`.
 *
 * @since 0.1.0
 * @category actions
 */
export const reset = (principal: Principal, connectionId: string) =>
  Effect.gen(function*() {
    const providers = yield* Providers
    const connection = yield* sandboxConnection(principal, connectionId, "Reset")
    yield* providers.state.reset(connection)
    // the world is back at its seed: the sync reads it again, and what is gone is removed
    yield* ManagedSync.afterSandboxReset(connection.id)
    yield* recover(connection)
    const at = yield* Clock.currentTimeMillis
    return answer({ connection_id: connection.id, reset_at: new Date(at).toISOString() }, connection)
  })

const faultAnswer = (connection: Connection, fault: Faults.Fault | undefined) =>
  answer({ connection_id: connection.id, fault: fault ?? null }, connection)

/**
 * `PUT /v1/sandbox/{id}/faults`: the connection's state system answers with the fault until it is
 * cleared or the connection reset.
 *
 * @since 0.1.0
 * @category actions
 */
export const setFault = (principal: Principal, connectionId: string, fault: CoreFault.Fault) =>
  Effect.gen(function*() {
    const providers = yield* Providers
    const connection = yield* sandboxConnection(principal, connectionId, "Faults")
    yield* providers.state.setFault(connection, fault)
    return faultAnswer(connection, fault)
  })

/**
 * `GET /v1/sandbox/{id}/faults`: the fault in force, or null.
 *
 * @since 0.1.0
 * @category actions
 */
export const getFault = (principal: Principal, connectionId: string) =>
  Effect.gen(function*() {
    const providers = yield* Providers
    const connection = yield* sandboxConnection(principal, connectionId, "Faults")
    return faultAnswer(connection, providers.state.faultOf(connection))
  })

/**
 * `DELETE /v1/sandbox/{id}/faults`: the state system answers normally again, and a connection in
 * `error` whose login works again is `active`.
 *
 * @since 0.1.0
 * @category actions
 */
export const clearFault = (principal: Principal, connectionId: string) =>
  Effect.gen(function*() {
    const providers = yield* Providers
    const connection = yield* sandboxConnection(principal, connectionId, "Faults")
    yield* providers.state.setFault(connection, null)
    yield* recover(connection)
    return faultAnswer(connection, undefined)
  })

const newLinkNeeds = (field: "provider" | "state") =>
  Errors.fail(
    "validation_error",
    "missing_parameter",
    `\`${field}\` is required to link a new sandbox connection (or send \`connection_id\` to relink one)`,
    field
  )

/**
 * `POST /v1/sandbox/public_token/create`: links a sandbox login server-side (the provider's good
 * test login unless `credentials` says otherwise) and answers a public token to exchange; with
 * `connection_id`, update mode without the widget.
 *
 * @since 0.1.0
 * @category actions
 */
export const publicToken = (
  principal: Principal,
  payload: {
    readonly provider?: string | undefined
    readonly state?: string | undefined
    readonly connection_id?: string | undefined
    readonly credentials?: Readonly<Record<string, string>> | undefined
    readonly external_id?: string | undefined
  }
) =>
  Effect.gen(function*() {
    yield* Auth.organisationOnly(principal, "Sandbox public tokens")
    if (!principal.scopes.includes("sandbox")) {
      return yield* Errors.fail(
        "permission_error",
        "sandbox_only",
        "Sandbox public tokens need an access token with the sandbox scope"
      )
    }
    const connections = yield* Connections
    if (payload.connection_id !== undefined) {
      // update mode without the widget (issue #30): the same connection gets the login again
      const connection = yield* connections.authorize(principal, payload.connection_id)
      if (!connection.is_sandbox) {
        return yield* Errors.fail(
          "permission_error",
          "sandbox_only",
          "Only a sandbox connection can be relinked here; relink a production connection with a link token in update mode (`connection_id`) and the Connect widget"
        )
      }
      if (connection.status === "inactive") {
        return yield* Errors.fail(
          "conflict_error",
          "connection_inactive",
          "This connection was disconnected; update mode cannot reopen it. Create a public token without connection_id to link again."
        )
      }
      for (const field of ["provider", "state"] as const) {
        const given = payload[field]
        if (given !== undefined && given !== connection[field]) {
          return yield* Errors.fail(
            "validation_error",
            "invalid_parameter",
            `\`${field}\` is ${given}, but connection ${connection.id} is ${connection[field]}; leave it out or send ${
              connection[field]
            }`,
            field
          )
        }
      }
      yield* Idempotency.authorised
      const relinked = yield* connections.relink(
        connection,
        payload.credentials ?? Registry.installed.get(connection.provider)?.logins.good ?? {},
        null
      )
      return answer({ public_token: relinked.public_token }, connection)
    }
    const { provider, state } = payload
    if (provider === undefined) return yield* newLinkNeeds("provider")
    if (state === undefined) return yield* newLinkNeeds("state")
    yield* Idempotency.authorised
    const linked = yield* connections.link(principal, {
      provider,
      state,
      // Without a login, the provider's documented good sandbox login.
      credentials: payload.credentials ?? Registry.installed.get(provider)?.logins.good ?? {},
      sandbox: true,
      external_id: payload.external_id ?? null,
      client_state: null
    })
    return answer({ public_token: linked.public_token }, { provider, state })
  })
