/**
 * `sync_inventory`: lots, each identified by its 16-digit barcode.
 */
import { Schema } from "effect"
import {
  Barcode,
  Code,
  IdString,
  OptionalBarcodes,
  OptionalEpoch,
  OptionalFlag,
  OptionalNumber,
  OptionalText,
  StringNumber,
  syncColumns
} from "./Common.js"

/** One `inventory` row. */
export const Inventory = Schema.Struct({
  id: Barcode,
  inventorytype: Code,
  strain: OptionalText,
  productname: OptionalText,
  remaining_quantity: StringNumber,
  usable_weight: OptionalNumber,
  rec_usableweight: OptionalNumber,
  net_package: OptionalNumber,
  currentroom: Schema.optionalWith(Schema.NullOr(IdString), { default: () => null }),
  location: IdString,
  plantid: OptionalBarcodes,
  parentid: OptionalBarcodes,
  inventoryparentid: OptionalBarcodes,
  source_id: OptionalText,
  is_sample: OptionalFlag,
  seized: OptionalFlag,
  wet: OptionalFlag,
  inventorystatus: Schema.optionalWith(Schema.NullOr(IdString), { default: () => null }),
  inventorystatustime: OptionalEpoch,
  ...syncColumns
})
/** An inventory row. */
export type Inventory = typeof Inventory.Type
