/**
 * An item (product definition) of a facility (spec §2).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { ItemId } from "./Ids.js"
import { facilityScoped, nullableString, ProviderObjectId } from "./internal/fields.js"
import { FiniteNumber } from "./Schemas.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export const Item = Schema.Struct({
  id: ItemId,
  name: Schema.String,
  category: Schema.String,
  strain: nullableString,
  unit_of_measure: Schema.String.annotations({ description: "Default unit" }),
  unit_weight: Schema.NullOr(FiniteNumber),
  ...facilityScoped,
  provider_item_id: ProviderObjectId
}).annotations({ identifier: "Item", description: "A product definition" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Item extends Schema.Schema.Type<typeof Item> {}
