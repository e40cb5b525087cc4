/**
 * @since 0.1.0
 */
import { HttpApiBuilder } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { CurrentPrincipal } from "@tracebridge/api/Security"
import { Registry } from "@tracebridge/sandbox"
import { Effect } from "effect"
import * as Errors from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import * as Auth from "../services/Auth.js"
import { Connections } from "../services/Connections.js"
import * as Envelope from "./envelope.js"

const newLinkNeeds = (field: "provider" | "state") =>
  Errors.fail(
    "validation_error",
    "missing_parameter",
    `\`${field}\` is required to link a new sandbox connection (or send \`connection_id\` to relink one)`,
    field
  )

/**
 * @since 0.1.0
 * @category layers
 */
export const HttpLinkLive = HttpApiBuilder.group(Api, "link", (handlers) =>
  handlers
    .handle("createLinkToken", ({ payload }) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const connections = yield* Connections
        return yield* Envelope.one(yield* connections.createLinkToken(principal, payload))
      }))
    .handle("exchangePublicToken", ({ payload }) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        const connections = yield* Connections
        const exchanged = yield* connections.exchange(principal, payload.public_token)
        return yield* Envelope.one(exchanged, { provider: exchanged.provider, state: exchanged.state })
      }))
    .handle("createSandboxPublicToken", ({ payload }) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
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
                `\`${field}\` is ${given}, but connection ${connection.id} is ${
                  connection[field]
                }; leave it out or send ${connection[field]}`,
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
          return yield* Envelope.one({ public_token: relinked.public_token }, {
            provider: connection.provider,
            state: connection.state
          })
        }
        const { provider, state } = payload
        if (provider === undefined) return yield* newLinkNeeds("provider")
        if (state === undefined) return yield* newLinkNeeds("state")
        yield* Idempotency.authorised
        const linked = yield* connections.link(principal, {
          provider: provider,
          state: state,
          // Without a login, the provider's documented good sandbox login.
          credentials: payload.credentials ?? Registry.installed.get(provider)?.logins.good ?? {},
          sandbox: true,
          external_id: payload.external_id ?? null,
          client_state: null
        })
        return yield* Envelope.one({ public_token: linked.public_token }, { provider: provider, state: state })
      })))
