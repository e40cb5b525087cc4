/**
 * The request id of the request being served: set once per request by the API middleware, echoed
 * in `X-Request-Id`, `meta.request_id` and `error.request_id`.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import { FiberRef } from "effect"
import { randomBytes } from "node:crypto"

/**
 * @since 0.1.0
 * @category fiber refs
 */
export const current: FiberRef.FiberRef<string> = FiberRef.unsafeMake("req_unknown")

/**
 * A new request id, `req_` and 24 hex digits.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (): string => `req_${randomBytes(12).toString("hex")}`

/**
 * The id of the request being served.
 *
 * @since 0.1.0
 * @category getters
 */
export const get: Effect.Effect<string> = FiberRef.get(current)
