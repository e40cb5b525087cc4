/**
 * `sync_manifest` (three flat tables joined by `manifestid` and `stopnumber`) and the transfer
 * lines of `sync_inventory_transfer` (outbound) and `sync_inventory_transfer_inbound`. Manifest
 * ids are strings ({@link ManifestId}).
 */
import { Schema } from "effect"
import {
  Barcode,
  Code,
  IdString,
  ManifestId,
  OptionalEpoch,
  OptionalFlag,
  OptionalNumber,
  OptionalText,
  StringNumber,
  syncColumns
} from "./Common.js"

/** One manifest header row. */
export const Manifest = Schema.Struct({
  manifestid: ManifestId,
  location: IdString,
  origination_license_number: IdString,
  origination_name: OptionalText,
  origination_street: OptionalText,
  origination_city: OptionalText,
  origination_state: OptionalText,
  origination_zip: OptionalText,
  origination_phone: OptionalText,
  transporter_id: OptionalText,
  transporter_name: OptionalText,
  transporter_dob: OptionalText,
  transporter_vehicle_details: OptionalText,
  transporter_vehicle_identification: OptionalText,
  stopcount: OptionalNumber,
  total_item_count: OptionalNumber,
  completion_date: OptionalEpoch,
  fulfilled: OptionalFlag,
  ...syncColumns
})
/** A manifest header. */
export type Manifest = typeof Manifest.Type

/** One `manifest_stop_data` row. */
export const ManifestStop = Schema.Struct({
  manifestid: ManifestId,
  stopnumber: IdString,
  license_number: IdString,
  name: OptionalText,
  street: OptionalText,
  city: OptionalText,
  state: OptionalText,
  zip: OptionalText,
  phone: OptionalText,
  travel_route: OptionalText,
  depart_time: OptionalEpoch,
  arrive_time: OptionalEpoch,
  item_count: OptionalNumber,
  ...syncColumns
})
/** A manifest stop. */
export type ManifestStop = typeof ManifestStop.Type

/** One `manifest_stop_items` row. */
export const ManifestStopItem = Schema.Struct({
  manifestid: ManifestId,
  stopnumber: IdString,
  inventoryid: Barcode,
  description: OptionalText,
  quantity: StringNumber,
  requiresweighing: OptionalFlag,
  ...syncColumns
})
/** A manifest stop item. */
export type ManifestStopItem = typeof ManifestStopItem.Type

/** One `inventory_transfer` (outbound) or `inventory_transfer_inbound` row. */
export const TransferLine = Schema.Struct({
  inventoryid: Barcode,
  inventorytype: Code,
  strain: OptionalText,
  quantity: StringNumber,
  price: OptionalNumber,
  manifestid: ManifestId,
  manifest_stop: IdString,
  outbound_license: Schema.optionalWith(Schema.NullOr(IdString), { default: () => null }),
  location: IdString,
  is_refund: OptionalFlag,
  refund_amount: OptionalNumber,
  ...syncColumns
})
/** A transfer line. */
export type TransferLine = typeof TransferLine.Type
