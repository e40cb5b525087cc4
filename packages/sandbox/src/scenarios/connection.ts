/**
 * The connection scenarios: what happens to the login and the line rather than to the licensee's
 * records. `connection_login_required`: the state system stops accepting the stored login until it
 * is entered again. `upstream_timeout` (DECISIONS "Sandbox reset and faults"): the state system
 * stops answering; it changes no state and returns the upstream fault to switch on (a `slow` fault
 * held for `delay_ms`, by default `Faults.MAX_DELAY_MS`), which `Sandbox.apply` sets until it is
 * cleared. No event.
 *
 * @since 0.1.0
 */
import { Either, Schema } from "effect"
import * as Faults from "../Faults.js"
import { define } from "./common.js"

/**
 * `connection_login_required`: the login now needs re-entering (the connection moves to `error`).
 *
 * @since 0.1.0
 * @category scenarios
 */
export const loginRequired = define({
  params: Schema.Struct({}),
  run: (world) => {
    world.loginRequired = true
    return Either.right({ change: null, loginRequired: true })
  }
})

/**
 * `upstream_timeout`: the world's upstream holds every answer back for `delay_ms`.
 *
 * @since 0.1.0
 * @category scenarios
 */
export const upstreamTimeout = define({
  params: Schema.Struct({
    delay_ms: Schema.optional(Schema.Int.pipe(Schema.between(0, Faults.MAX_DELAY_MS)))
  }),
  run: (_world, params) =>
    Either.right({
      change: null,
      loginRequired: false,
      fault: { kind: "slow", delay_ms: params.delay_ms ?? Faults.MAX_DELAY_MS }
    })
})
