/**
 * @since 0.1.0
 */
import { HttpApiBuilder } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { CurrentPrincipal } from "@tracebridge/api/Security"
import { Effect } from "effect"
import { Connections } from "../services/Connections.js"
import * as Envelope from "./envelope.js"
import { withConnection } from "./provider.js"

/**
 * @since 0.1.0
 * @category layers
 */
export const HttpConnectionsLive = HttpApiBuilder.group(Api, "connections", (handlers) =>
  handlers
    .handle("listConnections", ({ urlParams }) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const connections = yield* Connections
        return yield* Envelope.page(yield* connections.list(principal, urlParams))
      }))
    .handle("getConnection", ({ path }) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const connections = yield* Connections
        const connection = yield* connections.authorize(principal, path.connection_id)
        return yield* Envelope.one(yield* connections.view(connection), {
          provider: connection.provider,
          state: connection.state
        })
      }))
    .handle("deleteConnection", ({ path }) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const connections = yield* Connections
        const removed = yield* connections.remove(principal, path.connection_id)
        return yield* Envelope.one(removed, { provider: removed.provider, state: removed.state })
      }))
    .handle("listFacilities", ({ path, urlParams }) =>
      Effect.gen(function*() {
        const { connection, value } = yield* withConnection(
          path.connection_id,
          (port, session) => port.listFacilities(session, urlParams)
        )
        return yield* Envelope.page(value, { provider: connection.provider, state: connection.state })
      }))
    .handle("getFacility", ({ path }) =>
      Effect.gen(function*() {
        const { connection, value } = yield* withConnection(
          path.connection_id,
          (port, session) => port.getFacility(session, path.facility_id)
        )
        return yield* Envelope.one(value, { provider: connection.provider, state: connection.state })
      })))
