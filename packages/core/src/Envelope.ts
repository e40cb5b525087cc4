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
import { Skipped } from "./Skipped.js"

/**
 * `meta.sync` of a production read answered from the synced store (DECISIONS "Change feed and
 * managed sync"): how fresh it is. Absent when the read went to the state system.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StoreFreshness = Schema.Struct({
  status: Schema.Literal("backfilling", "live", "error"),
  last_synced_at: Schema.NullOr(IsoDateTime)
}).annotations({
  identifier: "StoreFreshness",
  description: "Present when the answer came from Tracebridge's synced store rather than the state system"
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Meta = Schema.Struct({
  request_id: Schema.String.annotations({ description: "Unique per request; equals the X-Request-Id header" }),
  timestamp: IsoDateTime,
  provider: Schema.optional(ProviderName).annotations({ description: "Provider that served the request" }),
  state: Schema.optional(UsState),
  sync: Schema.optional(StoreFreshness)
}).annotations({ identifier: "Meta" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Meta extends Schema.Schema.Type<typeof Meta> {}

/**
 * `meta` of a list: also the upstream rows left out because they could not be mapped
 * (DECISIONS "Tolerant reads"; an empty list when nothing was skipped).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListMeta = Schema.Struct({
  ...Meta.fields,
  skipped: Schema.Array(Skipped).annotations({
    description: "Upstream rows left out of this page because they could not be mapped (empty when none)"
  })
}).annotations({ identifier: "ListMeta" })

/**
 * @since 0.1.0
 * @category models
 */
export interface ListMeta extends Schema.Schema.Type<typeof ListMeta> {}

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
  Schema.Struct({ data: Schema.Array(item), meta: ListMeta, pagination: Pagination })
