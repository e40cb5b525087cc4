/**
 * plant_derivative rows of one plant-harvest transaction → Harvest.
 */
import type { Harvest } from "@tracebridge/core"
import type { Plant, PlantDerivative } from "../wire/Plant.js"
import type { Context } from "./context.js"
import { id, PROVIDER } from "./context.js"
import { isoDate, round, WASTE_TYPE } from "./vocabulary.js"

/**
 * A harvest is the transaction that cut the plants: its id is the `transactionid` shared by the
 * rows. Yield is the weight of the non-waste rows, waste the weight of type 27 rows, in grams;
 * the strain is the cut plants' strain (several become "A / B"). A transaction made only of
 * additional collections is a `Manicure`, otherwise `WholePlant`.
 */
export const toHarvest = (
  rows: ReadonlyArray<PlantDerivative>,
  ctx: Context,
  plants: ReadonlyMap<string, Plant> = new Map()
): Harvest.Harvest => {
  const first = rows[0]!
  const plantIds = [...new Set(rows.map((r) => r.plantid))]
  const strains = [...new Set(plantIds.map((p) => plants.get(p)?.strain).filter((s): s is string => s !== undefined))]
  const times = rows.map((r) => r.sessiontime).filter((t): t is number => t !== null)
  const date = isoDate(times.length > 0 ? Math.min(...times) : null) ?? "1970-01-01"
  const strain = strains.length > 0 ? strains.sort().join(" / ") : "Unknown"
  const weigh = (keep: (r: PlantDerivative) => boolean) => round(rows.filter(keep).reduce((n, r) => n + r.weight, 0))
  return {
    id: id("harvest", first.transactionid),
    harvest_name: `${strain} ${date}`,
    harvest_type: rows.every((r) => r.collectadditional) ? "Manicure" : "WholePlant",
    strain_name: strain,
    harvested_date: date,
    current_weight: weigh((r) => r.inventorytype !== WASTE_TYPE),
    unit_of_measure: "Grams",
    total_waste_weight: weigh((r) => r.inventorytype === WASTE_TYPE),
    plant_count: plantIds.length,
    source_plant_ids: plantIds.map((p) => id("plant", p)),
    facility_id: ctx.facility_id,
    provider: PROVIDER,
    provider_harvest_id: first.transactionid
  }
}
