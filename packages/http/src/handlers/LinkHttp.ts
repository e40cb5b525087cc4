/**
 * @since 0.1.0
 */
import { HttpApiBuilder } from "@effect/platform"
import { Registry } from "@tracebridge/sandbox"
import { Effect } from "effect"
import { Api } from "../Api.js"
import * as Errors from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import { CurrentPrincipal } from "../Security.js"
import * as Auth from "../services/Auth.js"
import { Connections } from "../services/Connections.js"
import * as Envelope from "./envelope.js"

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
        yield* Idempotency.authorised
        const connections = yield* Connections
        const linked = yield* connections.link(principal, {
          provider: payload.provider,
          state: payload.state,
          // Without a login, the provider's documented good sandbox login.
          credentials: payload.credentials ?? Registry.installed.get(payload.provider)?.logins.good ?? {},
          sandbox: true,
          external_id: payload.external_id ?? null,
          client_state: null
        })
        return yield* Envelope.one({ public_token: linked.public_token }, {
          provider: payload.provider,
          state: payload.state
        })
      })))
