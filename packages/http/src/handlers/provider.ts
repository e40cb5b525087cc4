import type { ProviderError, ProviderPort, Session } from "@tracebridge/core"
import { Effect, Option } from "effect"
import * as Errors from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import type { Connection } from "../persistence/Repo.js"
import { CurrentPrincipal } from "../Security.js"
import { Connections } from "../services/Connections.js"
import { Providers } from "../services/Providers.js"

/**
 * Runs a provider call for a connection the caller may reach: authorises it, restores its sandbox
 * world, runs the call within the request's upstream deadline (`Providers.upstream`), maps
 * provider errors to the wire (a refused login moves the connection to `error`; a throttle or a
 * timeout gets `Retry-After`), and stores the sandbox changes the call made.
 */
export const withConnection = <A>(
  connectionId: string,
  call: (
    port: ProviderPort.Service,
    session: Session.Session,
    connection: Connection
  ) => Effect.Effect<A, ProviderError.ProviderError>
) =>
  Effect.gen(function*() {
    const principal = yield* CurrentPrincipal
    const connections = yield* Connections
    const providers = yield* Providers
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
    yield* providers.prepare(connection)
    const port = yield* providers.port(connection.provider, connection.is_sandbox)
    if (Option.isNone(port)) {
      return yield* Errors.fail("api_error", "internal_error", `No port for ${connection.provider}`)
    }
    const session = yield* providers.session(connection)
    const result = yield* Effect.either(providers.upstream(connection.provider, call(port.value, session, connection)))
    yield* providers.persist
    if (result._tag === "Right") {
      return { value: result.right, connection }
    }
    const error = result.left
    if (error._tag === "ProviderLoginRequired") yield* connections.moveTo(connection, "error")
    return yield* Effect.flatMap(Errors.fromProviderError(error), Effect.fail)
  })
