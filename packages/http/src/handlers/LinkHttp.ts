/**
 * @since 0.1.0
 */
import { HttpApiBuilder } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { CurrentPrincipal } from "@tracebridge/api/Security"
import { Effect } from "effect"
import { Connections } from "../services/Connections.js"
import * as SandboxActions from "../services/SandboxActions.js"
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
        const { data, meta } = yield* SandboxActions.publicToken(principal, payload)
        return yield* Envelope.one(data, meta)
      })))
