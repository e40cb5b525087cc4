/**
 * `/v1/sandbox`: scenarios, reset and upstream faults of a sandbox connection. The code is
 * `services/SandboxActions.ts`, shared with the dashboard's Sandbox page.
 *
 * @since 0.1.0
 */
import { HttpApiBuilder } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { CurrentPrincipal } from "@tracebridge/api/Security"
import { Effect } from "effect"
import * as SandboxActions from "../services/SandboxActions.js"
import * as Envelope from "./envelope.js"

const enveloped = <A, E, R>(effect: Effect.Effect<SandboxActions.Answer<A>, E, R>) =>
  Effect.flatMap(effect, ({ data, meta }) => Envelope.one(data, meta))

/**
 * @since 0.1.0
 * @category layers
 */
export const HttpSandboxLive = HttpApiBuilder.group(
  Api,
  "sandbox",
  (handlers) =>
    handlers
      .handle("simulate", ({ path, payload }) =>
        Effect.flatMap(
          CurrentPrincipal,
          (principal) => enveloped(SandboxActions.simulate(principal, path.connection_id, payload))
        ))
      .handle("reset", ({ path }) =>
        Effect.flatMap(
          CurrentPrincipal,
          (principal) => enveloped(SandboxActions.reset(principal, path.connection_id))
        ))
      .handle("setFault", ({ path, payload }) =>
        Effect.flatMap(
          CurrentPrincipal,
          (principal) => enveloped(SandboxActions.setFault(principal, path.connection_id, payload))
        ))
      .handle("getFault", ({ path }) =>
        Effect.flatMap(
          CurrentPrincipal,
          (principal) => enveloped(SandboxActions.getFault(principal, path.connection_id))
        ))
      .handle("clearFault", ({ path }) =>
        Effect.flatMap(
          CurrentPrincipal,
          (principal) => enveloped(SandboxActions.clearFault(principal, path.connection_id))
        ))
)
