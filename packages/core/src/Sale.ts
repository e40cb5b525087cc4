/**
 * A retail sale (receipt) with its lines (spec §2).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { PackageId, SaleId } from "./Ids.js"
import { facilityScoped, nullableString, ProviderObjectId } from "./internal/fields.js"
import { FiniteNumber, IsoDateTime } from "./Schemas.js"

/**
 * One line of a sale.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SaleItem = Schema.Struct({
  package_id: PackageId,
  tag: Schema.String,
  item_name: Schema.String,
  quantity: FiniteNumber,
  unit_of_measure: Schema.String,
  unit_price: FiniteNumber.annotations({ description: "Before discounts" }),
  discount: FiniteNumber,
  total: FiniteNumber.annotations({ description: "After discount" })
}).annotations({ identifier: "SaleItem" })

/**
 * @since 0.1.0
 * @category models
 */
export interface SaleItem extends Schema.Schema.Type<typeof SaleItem> {}

/**
 * @since 0.1.0
 * @category schemas
 */
export const Sale = Schema.Struct({
  id: SaleId,
  receipt_number: Schema.String,
  sale_date: IsoDateTime,
  customer_type: Schema.String.annotations({ description: "e.g. Consumer, Patient, Caregiver" }),
  patient_license: nullableString,
  caregiver_license: nullableString,
  items: Schema.Array(SaleItem),
  total_price: FiniteNumber.annotations({ description: "Before discounts" }),
  total_discount: FiniteNumber,
  ...facilityScoped,
  provider_sale_id: ProviderObjectId
}).annotations({ identifier: "Sale", description: "A retail sale" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Sale extends Schema.Schema.Type<typeof Sale> {}
