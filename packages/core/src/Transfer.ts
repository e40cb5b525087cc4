/**
 * A transfer: a manifest that moves packages between facilities (spec §2).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { PackageId, TransferId } from "./Ids.js"
import { facilityScoped, nullableString, ProviderObjectId } from "./internal/fields.js"
import { FiniteNumber, IsoDateTime } from "./Schemas.js"

/**
 * `pending` → `in_transit` → `received` | `rejected`, or `pending` → `rejected`
 * (see `Transitions.transferStatus`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const TransferStatus = Schema.Literal("pending", "in_transit", "received", "rejected").annotations({
  identifier: "TransferStatus"
})

/**
 * @since 0.1.0
 * @category models
 */
export type TransferStatus = typeof TransferStatus.Type

/**
 * A transfer's direction as seen from the facility whose list returned it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TransferDirection = Schema.Literal("incoming", "outgoing").annotations({ identifier: "TransferDirection" })

/**
 * @since 0.1.0
 * @category models
 */
export type TransferDirection = typeof TransferDirection.Type

/**
 * One package line of a transfer.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TransferPackage = Schema.Struct({
  package_id: PackageId,
  tag: Schema.String,
  item_name: Schema.String,
  quantity: FiniteNumber,
  unit_of_measure: Schema.String
}).annotations({ identifier: "TransferPackage" })

/**
 * @since 0.1.0
 * @category models
 */
export interface TransferPackage extends Schema.Schema.Type<typeof TransferPackage> {}

/**
 * @since 0.1.0
 * @category schemas
 */
export const Transfer = Schema.Struct({
  id: TransferId,
  manifest_number: Schema.String.annotations({ description: "State-issued" }),
  transfer_type: Schema.String.annotations({ description: "Free text, not a fixed set" }),
  shipper_facility: Schema.String.annotations({ description: "Name or id of the facility" }),
  recipient_facility: Schema.String.annotations({ description: "Name or id of the facility" }),
  packages: Schema.Array(TransferPackage),
  status: TransferStatus,
  estimated_departure: Schema.NullOr(IsoDateTime),
  estimated_arrival: Schema.NullOr(IsoDateTime),
  actual_departure: Schema.NullOr(IsoDateTime),
  actual_arrival: Schema.NullOr(IsoDateTime),
  transporter: nullableString,
  driver_name: nullableString,
  vehicle_info: nullableString,
  ...facilityScoped,
  provider_transfer_id: ProviderObjectId
}).annotations({ identifier: "Transfer", description: "A manifest that moved packages" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Transfer extends Schema.Schema.Type<typeof Transfer> {}
