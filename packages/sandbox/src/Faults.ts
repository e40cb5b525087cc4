/**
 * Switchable upstream faults, per connection: each world (a provider, state and login, so one
 * connection: the /v1 service gives each connection its own login, `user_good~conn_…`) can be
 * made to answer as a state system does when it is down, slow, throttling, broken or refusing an
 * expired login. A fault stays until it is cleared and never touches another world.
 *
 * | kind | provider_a (Metrc) | provider_b (BioTrack) |
 * |---|---|---|
 * | `outage` | 503 with the front end's HTML page | 503 with the front end's HTML page |
 * | `slow` | the normal answer, `delay_ms` later (Effect's `Clock`) | the same |
 * | `rate_limited` | 429 `{Message}` with `Retry-After` | 429 with `Retry-After` |
 * | `malformed` | 200 with a truncated JSON body | 200 with a truncated JSON body |
 * | `expired_login` | 401 with `WWW-Authenticate`, like every refused user key | login refused, sessions answer errorcode 63 |
 *
 * The `upstream_timeout` scenario (`Scenario`) switches a world to `slow` at `MAX_DELAY_MS` (or its
 * `delay_ms`): the state system stops answering until the fault is cleared.
 *
 * The sandbox holds each world's fault (`Sandbox.fault`, `Sandbox.setFault`; a reset clears it).
 * The emulators read the fault of the world a request reaches; a slow answer is marked with its
 * delay (`delayed`), which the in-process client sleeps on Effect's `Clock` (so
 * `TestClock` drives it) and the standalone server on a timer.
 *
 * @since 0.1.0
 */
import { Fault as CoreFault } from "@tracebridge/core"

/**
 * How long a `slow` fault delays an answer unless told (core's `Fault.DEFAULT_DELAY_MS`).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_DELAY_MS = CoreFault.DEFAULT_DELAY_MS

/**
 * The longest a `slow` fault may hold an answer (core's `Fault.MAX_DELAY_MS`).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_DELAY_MS = CoreFault.MAX_DELAY_MS

/**
 * The `Retry-After` (seconds) of a `rate_limited` fault unless told (core's `Fault.DEFAULT_RETRY_AFTER`).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_RETRY_AFTER = CoreFault.DEFAULT_RETRY_AFTER

/**
 * A fault, as set through the service API and the control API (the same JSON): core's schema,
 * which the contract shares.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Fault = CoreFault.Fault

/**
 * @since 0.1.0
 * @category models
 */
export type Fault = CoreFault.Fault

/**
 * The fault kinds.
 *
 * @since 0.1.0
 * @category models
 */
export type Kind = CoreFault.Kind

/**
 * A response to be sent later: what a `slow` fault answers (see {@link delayed}).
 *
 * @since 0.1.0
 * @category delays
 */
export class Delayed extends Response {
  constructor(response: Response, readonly delayMs: number) {
    super(response.body, { status: response.status, statusText: response.statusText, headers: response.headers })
  }
}

/**
 * Marks a response to be sent `ms` later (what a `slow` fault does).
 *
 * @since 0.1.0
 * @category delays
 */
export const delayed = (response: Response, ms: number): Response => ms > 0 ? new Delayed(response, ms) : response

/**
 * How long a response is to be held back, in ms (0 for most).
 *
 * @since 0.1.0
 * @category delays
 */
export const delayOf = (response: Response): number => response instanceof Delayed ? response.delayMs : 0

/**
 * The delay of a world's `slow` fault, in ms (0 without one).
 *
 * @since 0.1.0
 * @category delays
 */
export const delayFor = (fault: Fault | undefined): number =>
  fault?.kind === "slow" ? fault.delay_ms ?? DEFAULT_DELAY_MS : 0

/**
 * What a front end in trouble answers: 503 with an HTML page (the same for both providers: an
 * outage is the load balancer's page, not the API's JSON).
 *
 * @since 0.1.0
 * @category answers
 */
export const outage = (): Response =>
  new Response(
    "<html><head><title>503 Service Unavailable</title></head><body><h1>Service Unavailable</h1></body></html>",
    { status: 503, headers: { "content-type": "text/html" } }
  )

/**
 * A 200 whose JSON body is cut off (what a `malformed` fault answers).
 *
 * @since 0.1.0
 * @category answers
 */
export const malformed = (): Response =>
  new Response("{\"Data\":[{\"Id\":1,\"Label\":\"1A4", { status: 200, headers: { "content-type": "application/json" } })

/**
 * The `Retry-After` (seconds) of a `rate_limited` fault.
 *
 * @since 0.1.0
 * @category answers
 */
export const retryAfterOf = (fault: { readonly retry_after?: number | undefined }): number =>
  fault.retry_after ?? DEFAULT_RETRY_AFTER
