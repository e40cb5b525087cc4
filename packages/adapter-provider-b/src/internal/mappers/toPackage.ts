/**
 * inventory row → Package.
 */
import type { LabResult, Package } from "@tracebridge/core"
import type { Inventory } from "../wire/Inventory.js"
import type { PlantDerivative } from "../wire/Plant.js"
import type { QaSample } from "../wire/QaSample.js"
import type { Context } from "./context.js"
import { id, PROVIDER } from "./context.js"
import { inventoryType, isoDate, labTestingState } from "./vocabulary.js"

/** The item name: `productname`, or the type's label when there is none. */
export const itemName = (row: Inventory): string => {
  const name = row.productname?.trim() ?? ""
  return name.length > 0 ? name : inventoryType(row.inventorytype).label
}

/** The lot's parents: `parentid` then `inventoryparentid`, without repeats or itself. */
export const parentsOf = (row: Inventory): Array<string> =>
  [...new Set([...row.parentid, ...row.inventoryparentid])].filter((p) => p !== row.id)

const strainOf = (row: Inventory): string | null => {
  const s = row.strain?.trim() ?? ""
  return s.length > 0 ? s : null
}

/** What else a package needs from other tables. */
export interface PackageExtras {
  /** Derivative rows that produced this lot (their transactions are its harvests). */
  readonly derivatives?: ReadonlyArray<PlantDerivative>
  /** QA samples drawn from this lot, oldest first (the last one sets the lab testing state). */
  readonly samples?: ReadonlyArray<QaSample>
  /** Lab results of this lot, already mapped. */
  readonly labResults?: ReadonlyArray<LabResult.LabResult>
}

export const toPackage = (row: Inventory, ctx: Context, extras: PackageExtras = {}): Package.Package => {
  const type = inventoryType(row.inventorytype)
  const parents = parentsOf(row)
  const harvests = [
    ...new Set((extras.derivatives ?? []).filter((d) => d.inventoryid === row.id).map((d) => d.transactionid))
  ]
  const samples = (extras.samples ?? []).filter((s) => s.parentid === row.id)
  const onHold = row.seized || (row.inventorystatus !== null && row.inventorystatus !== "0")
  return {
    id: id("package", row.id),
    tag: row.id,
    source_tag: parents[0] ?? null,
    item_name: itemName(row),
    item_category: type.category,
    item_strain: strainOf(row),
    quantity: row.remaining_quantity,
    unit_of_measure: type.unit,
    lab_testing_state: labTestingState(samples[samples.length - 1]?.result),
    is_on_hold: onHold,
    packaged_date: isoDate(row.sessiontime),
    expiration_date: null,
    facility_id: ctx.facility_id,
    provider: PROVIDER,
    provider_package_id: row.id,
    source_harvest_ids: harvests.map((h) => id("harvest", h)),
    source_package_ids: parents.map((p) => id("package", p)),
    lab_results: (extras.labResults ?? []).filter((r) => r.package_id === id("package", row.id)),
    metadata: {
      InventoryType: row.inventorytype,
      InventoryTypeName: type.label,
      UsableWeight: row.usable_weight,
      NetPackageWeight: row.net_package,
      RoomID: row.currentroom,
      SourcePlantID: row.plantid,
      IsSample: row.is_sample,
      Dried: !row.wet,
      Seized: row.seized,
      Status: row.inventorystatus,
      TransactionID: row.transactionid,
      SessionTime: row.sessiontime
    }
  }
}
