/**
 * A sales delivery to a consumer or patient (spec §2). Gated by the `sales_deliveries` capability.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { PackageId, SalesDeliveryId } from "./Ids.js"
import { facilityScoped, nullableString, ProviderObjectId } from "./internal/fields.js"
import { FiniteNumber, IsoDateTime } from "./Schemas.js"

/**
 * One line of a sales delivery.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SalesDeliveryItem = Schema.Struct({
  package_id: PackageId,
  item_name: Schema.String,
  unit_of_measure: Schema.String,
  quantity: FiniteNumber
}).annotations({ identifier: "SalesDeliveryItem" })

/**
 * @since 0.1.0
 * @category models
 */
export interface SalesDeliveryItem extends Schema.Schema.Type<typeof SalesDeliveryItem> {}

/**
 * @since 0.1.0
 * @category schemas
 */
export const SalesDelivery = Schema.Struct({
  id: SalesDeliveryId,
  recipient_name: nullableString,
  recipient_city: nullableString,
  recipient_state: nullableString,
  delivery_date: Schema.NullOr(IsoDateTime),
  customer_type: Schema.String,
  patient_license: nullableString,
  status: nullableString.annotations({ description: "Provider-reported free text" }),
  items: Schema.Array(SalesDeliveryItem),
  ...facilityScoped,
  provider_delivery_id: ProviderObjectId
}).annotations({ identifier: "SalesDelivery", description: "A delivery of a sale" })

/**
 * @since 0.1.0
 * @category models
 */
export interface SalesDelivery extends Schema.Schema.Type<typeof SalesDelivery> {}
