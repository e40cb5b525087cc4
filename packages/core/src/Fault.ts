/**
 * A sandbox connection's upstream fault, as the contract takes and answers it: the state system
 * down (`outage`), slow (`slow`, `delay_ms`), throttling (`rate_limited`, `retry_after`), answering
 * garbage (`malformed`) or refusing an expired login (`expired_login`). The sandbox applies it (its
 * `Faults` module); the contract (`@tracebridge/api`) and the control API only need its shape.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * How long a `slow` fault delays an answer unless told: past both adapters' 30 s timeout.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_DELAY_MS = 60_000

/**
 * The longest a `slow` fault may hold an answer (10 minutes): past any upstream deadline, so a
 * state system that answers this late has, for its callers, stopped answering (the
 * `upstream_timeout` scenario's default).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_DELAY_MS = 600_000

/**
 * The `Retry-After` (seconds) of a `rate_limited` fault unless told: past the 30 s the provider_a
 * adapter honours, so it reports the limit at once instead of waiting.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_RETRY_AFTER = 60

/**
 * A fault, as set through the service API and the control API (the same JSON).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Fault = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("outage") }),
  Schema.Struct({
    kind: Schema.Literal("slow"),
    delay_ms: Schema.optional(Schema.Int.pipe(Schema.between(0, MAX_DELAY_MS)))
  }),
  Schema.Struct({
    kind: Schema.Literal("rate_limited"),
    retry_after: Schema.optional(Schema.Int.pipe(Schema.between(0, 86_400)))
  }),
  Schema.Struct({ kind: Schema.Literal("malformed") }),
  Schema.Struct({ kind: Schema.Literal("expired_login") })
)

/**
 * @since 0.1.0
 * @category models
 */
export type Fault = typeof Fault.Type

/**
 * The fault kinds.
 *
 * @since 0.1.0
 * @category models
 */
export type Kind = Fault["kind"]
