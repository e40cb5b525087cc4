/**
 * sale rows of one transaction → Sale.
 */
import type { Sale } from "@tracebridge/core"
import type { Inventory } from "../wire/Inventory.js"
import type { Sale as SaleRow } from "../wire/Sale.js"
import type { Context } from "./context.js"
import { id, PROVIDER } from "./context.js"
import { itemName } from "./toPackage.js"
import { inventoryType, isoDateTime, round } from "./vocabulary.js"

/**
 * A sale is the `transactionid` its lines share. A line's `price` is what the line cost, so the
 * unit price is price / quantity; BioTrack records no discounts. A `card_id` on a line makes the
 * customer a Patient with that card as licence; otherwise a Consumer.
 */
export const toSale = (
  rows: ReadonlyArray<SaleRow>,
  ctx: Context,
  inventory: ReadonlyMap<string, Inventory> = new Map()
): Sale.Sale => {
  const first = rows[0]!
  const card = rows.map((r) => r.card_id?.trim() ?? "").find((c) => c.length > 0) ?? null
  const times = rows.map((r) => r.sessiontime).filter((t): t is number => t !== null)
  const items = rows.map((r) => {
    const lot = inventory.get(r.inventoryid)
    return {
      package_id: id("package", r.inventoryid),
      tag: r.inventoryid,
      item_name: lot === undefined ? r.inventoryid : itemName(lot),
      quantity: r.quantity,
      unit_of_measure: lot === undefined ? "Each" : inventoryType(lot.inventorytype).unit,
      unit_price: r.quantity === 0 ? r.price : round(r.price / r.quantity),
      discount: 0,
      total: r.price
    }
  })
  return {
    id: id("sale", first.transactionid),
    receipt_number: first.transactionid,
    sale_date: isoDateTime(times.length > 0 ? Math.min(...times) : 0) ?? "1970-01-01T00:00:00Z",
    customer_type: card === null ? "Consumer" : "Patient",
    patient_license: card,
    caregiver_license: null,
    items,
    total_price: round(items.reduce((n, i) => n + i.total, 0)),
    total_discount: 0,
    facility_id: ctx.facility_id,
    provider: PROVIDER,
    provider_sale_id: first.transactionid
  }
}
