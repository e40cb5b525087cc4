/**
 * The change feed and the sync status (DECISIONS "Change feed and managed sync"): what
 * `GET P/changes` and `GET /v1/connections/{connection_id}/sync` answer.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Meta } from "./Envelope.js"
import { Harvest } from "./Harvest.js"
import { Item } from "./Item.js"
import { LabResult } from "./LabResult.js"
import { Location } from "./Location.js"
import { Package } from "./Package.js"
import { Patient } from "./Patient.js"
import { Plant } from "./Plant.js"
import { Sale } from "./Sale.js"
import { SalesDelivery } from "./SalesDelivery.js"
import { IsoDateTime } from "./Schemas.js"
import { Strain } from "./Strain.js"
import { Transfer } from "./Transfer.js"

/**
 * The facility-level list names a change can be of (and `types` can name).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChangeType = Schema.Literal(
  "packages",
  "plants",
  "harvests",
  "lab_results",
  "transfers",
  "sales",
  "sales_deliveries",
  "items",
  "strains",
  "locations",
  "patients"
).annotations({ identifier: "ChangeType" })

/**
 * @since 0.1.0
 * @category models
 */
export type ChangeType = typeof ChangeType.Type

/**
 * One change: an object stored or removed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Change = Schema.Struct({
  id: Schema.String.annotations({ description: "The change's id (`chg_…`), unique within the facility's feed" }),
  type: ChangeType,
  action: Schema.Literal("upserted", "removed"),
  object_id: Schema.String,
  object: Schema.NullOr(
    Schema.Union(Package, Plant, Harvest, LabResult, Transfer, Sale, SalesDelivery, Item, Strain, Location, Patient)
  ).annotations({ description: "The object as its GET returns it; null when removed" }),
  changed_at: IsoDateTime
}).annotations({ identifier: "Change" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Change extends Schema.Schema.Type<typeof Change> {}

/**
 * A sync state.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SyncState = Schema.Literal("backfilling", "live", "error").annotations({ identifier: "SyncState" })

/**
 * How fresh a facility's synced data is.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Freshness = Schema.Struct({
  status: SyncState,
  backfilled_through: Schema.NullOr(IsoDateTime).annotations({
    description: "How far back in the facility's history the backfill has read, or, once live, where it started"
  }),
  last_synced_at: Schema.NullOr(IsoDateTime)
}).annotations({ identifier: "SyncFreshness" })

/**
 * `meta` of a feed page.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChangesMeta = Schema.Struct({
  ...Meta.fields,
  next_cursor: Schema.String.annotations({
    description: "Pass it as `cursor` for the next page (or, when `has_more` is false, to wait for new changes)"
  }),
  has_more: Schema.Boolean,
  sync: Freshness
}).annotations({ identifier: "ChangesMeta" })

/**
 * A page of the feed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Changes = Schema.Struct({ data: Schema.Array(Change), meta: ChangesMeta }).annotations({
  identifier: "Changes"
})

/**
 * One resource's sync within a facility.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResourceSync = Schema.Struct({
  type: ChangeType,
  status: Schema.Literal("backfilling", "live", "error", "unavailable"),
  count: Schema.Int.annotations({ description: "Objects stored" }),
  backfilled_through: Schema.NullOr(IsoDateTime),
  last_synced_at: Schema.NullOr(IsoDateTime),
  last_error: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ResourceSync" })

/**
 * One facility's sync.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FacilitySync = Schema.Struct({
  facility_id: Schema.String,
  ...Freshness.fields,
  last_error: Schema.NullOr(Schema.String),
  resources: Schema.Array(ResourceSync)
}).annotations({ identifier: "FacilitySync" })

/**
 * `GET /v1/connections/{connection_id}/sync`'s `data`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectionSync = Schema.Struct({
  connection_id: Schema.String,
  facilities: Schema.Array(FacilitySync)
}).annotations({ identifier: "ConnectionSync" })
