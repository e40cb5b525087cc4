/**
 * @since 0.1.0
 */
import { HttpApiBuilder } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { CurrentPrincipal } from "@tracebridge/api/Security"
import { WebhookEvent } from "@tracebridge/core"
import type { Faults, World } from "@tracebridge/sandbox"
import { Scenario } from "@tracebridge/sandbox"
import { Clock, Effect, Either, Option } from "effect"
import * as Errors from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import type { Connection } from "../persistence/ConnectionStore.js"
import { Transactions } from "../persistence/Transactions.js"
import { Connections } from "../services/Connections.js"
import * as ManagedSync from "../services/ManagedSync.js"
import { Providers } from "../services/Providers.js"
import { Webhooks } from "../services/Webhooks.js"
import * as Envelope from "./envelope.js"

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

/** A sandbox connection of the caller that is not disconnected (checked before any key is claimed). */
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

const sandboxConnection = (connectionId: string, what: string) =>
  Effect.gen(function*() {
    const principal = yield* CurrentPrincipal
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

const faultAnswer = (
  connection: { readonly id: string; readonly provider: string; readonly state: string },
  fault: Faults.Fault | undefined
) =>
  Envelope.one(
    { connection_id: connection.id, fault: fault ?? null },
    { provider: connection.provider, state: connection.state }
  )

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
 * @since 0.1.0
 * @category layers
 */
export const HttpSandboxLive = HttpApiBuilder.group(
  Api,
  "sandbox",
  (handlers) =>
    handlers.handle("simulate", ({ path, payload }) =>
      Effect.gen(function*() {
        const connections = yield* Connections
        const providers = yield* Providers
        const webhooks = yield* Webhooks
        const transactions = yield* Transactions
        const connection = yield* sandboxConnection(path.connection_id, "Simulate")
        const at = yield* Clock.currentTimeMillis
        // The change, its event and any fault it switches on are stored together before we answer:
        // no event is lost. Once committed, the deliveries go straight to this process's worker (or
        // it is woken); not interrupted in between, so that they never wait for their lease to lapse.
        const { deliveries, event, outcome } = yield* providers.state.write(connection, (commit, version) =>
          Effect.gen(function*() {
            const world = providers.state.world(connection)
            const result = providers.sandbox.apply<Scenario.Outcome, Scenario.Failure>(world, {
              _tag: "Scenario",
              input: { name: payload.scenario, params: payload.params ?? {}, at }
            })
            if (Either.isLeft(result)) return yield* scenarioError(result.left)
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
        if (outcome.loginRequired) yield* connections.moveTo(connection, "error")
        yield* ManagedSync.afterSandboxChange(connection.id)
        return yield* Envelope.one(
          { scenario: outcome.scenario, event, deliveries },
          { provider: connection.provider, state: connection.state }
        )
      }))
      .handle("reset", ({ path }) =>
        Effect.gen(function*() {
          const providers = yield* Providers
          const connection = yield* sandboxConnection(path.connection_id, "Reset")
          yield* providers.state.reset(connection)
          // the world is back at its seed: the sync reads it again, and what is gone is removed
          yield* ManagedSync.afterSandboxReset(connection.id)
          yield* recover(connection)
          const at = yield* Clock.currentTimeMillis
          return yield* Envelope.one(
            { connection_id: connection.id, reset_at: new Date(at).toISOString() },
            { provider: connection.provider, state: connection.state }
          )
        }))
      .handle("setFault", ({ path, payload }) =>
        Effect.gen(function*() {
          const providers = yield* Providers
          const connection = yield* sandboxConnection(path.connection_id, "Faults")
          yield* providers.state.setFault(connection, payload)
          return yield* faultAnswer(connection, payload)
        }))
      .handle("getFault", ({ path }) =>
        Effect.gen(function*() {
          const providers = yield* Providers
          const connection = yield* sandboxConnection(path.connection_id, "Faults")
          return yield* faultAnswer(connection, providers.state.faultOf(connection))
        }))
      .handle("clearFault", ({ path }) =>
        Effect.gen(function*() {
          const providers = yield* Providers
          const connection = yield* sandboxConnection(path.connection_id, "Faults")
          yield* providers.state.setFault(connection, null)
          yield* recover(connection)
          return yield* faultAnswer(connection, undefined)
        }))
)
