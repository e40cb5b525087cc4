/**
 * The response envelope of every successful `/v1` answer: `data`, `meta` and, on lists,
 * `pagination` (spec §1).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Pagination } from "./Page.js"
import { ProviderName, UsState } from "./ProviderName.js"
import { IsoDateTime } from "./Schemas.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export const Meta = Schema.Struct({
  request_id: Schema.String.annotations({ description: "Unique per request; equals the X-Request-Id header" }),
  timestamp: IsoDateTime,
  provider: Schema.optional(ProviderName).annotations({ description: "Provider that served the request" }),
  state: Schema.optional(UsState)
}).annotations({ identifier: "Meta" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Meta extends Schema.Schema.Type<typeof Meta> {}

/**
 * The envelope around one object.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Envelope = <A, I, R>(data: Schema.Schema<A, I, R>) => Schema.Struct({ data, meta: Meta })

/**
 * The envelope around one page of a list.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Paginated = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  Schema.Struct({ data: Schema.Array(item), meta: Meta, pagination: Pagination })
