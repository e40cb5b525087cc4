/**
 * inventory rows of one product → Item. Classic BioTrack has no item object: an item is a distinct
 * (`inventorytype`, product name) pair that inventory uses.
 */
import type { Item } from "@tracebridge/core"
import type { Inventory } from "../wire/Inventory.js"
import type { Context } from "./context.js"
import { id, PROVIDER } from "./context.js"
import { itemName } from "./toPackage.js"
import { inventoryType } from "./vocabulary.js"

/** The item key of a lot: `<inventorytype>:<item name>`. */
export const itemKey = (row: Inventory): string => `${row.inventorytype}:${itemName(row)}`

/**
 * The strain is the one strain all the lots share, else null. Unit types report the usable weight
 * of one unit as `unit_weight` (the first lot's); bulk types have none.
 */
export const toItem = (rows: ReadonlyArray<Inventory>, ctx: Context): Item.Item => {
  const first = rows[0]!
  const type = inventoryType(first.inventorytype)
  const strains = [...new Set(rows.map((r) => r.strain?.trim() ?? ""))]
  return {
    id: id("item", itemKey(first)),
    name: itemName(first),
    category: type.category,
    strain: strains.length === 1 && strains[0]!.length > 0 ? strains[0]! : null,
    unit_of_measure: type.unit,
    unit_weight: type.unit === "Each" ? first.usable_weight : null,
    facility_id: ctx.facility_id,
    provider: PROVIDER,
    provider_item_id: itemKey(first)
  }
}
