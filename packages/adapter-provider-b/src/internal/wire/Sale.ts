/**
 * `sync_sale`: one row per sold line; the sale is the `transactionid`.
 */
import { Schema } from "effect"
import { Barcode, IdString, OptionalText, StringNumber, syncColumns } from "./Common.js"

/** One `sale` row. */
export const Sale = Schema.Struct({
  inventoryid: Barcode,
  itemnumber: Schema.optional(IdString),
  price: StringNumber,
  quantity: StringNumber,
  terminal_id: Schema.optional(IdString),
  location: IdString,
  card_id: OptionalText,
  ...syncColumns
})
/** A sale row. */
export type Sale = typeof Sale.Type
