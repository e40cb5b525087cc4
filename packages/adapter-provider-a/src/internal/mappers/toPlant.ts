import type { Plant } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { toDate } from "../time.js"
import type { PlantV2 } from "../wire/Plant.js"
import type { MapContext } from "./context.js"
import { facilityIdOf, PROVIDER, text } from "./context.js"

/** Metrc growth phases onto ours: Immature/Clone/Seedling → clone (Mother counts as vegetative). */
export const growthPhase = (phase: string): Plant.GrowthPhase => {
  const p = phase.toLowerCase()
  if (p.startsWith("flower")) return "flowering"
  if (p.startsWith("veg") || p === "mother") return "vegetative"
  return "clone"
}

/** The Tracebridge id of a Metrc plant: derived from its label, like packages. */
export const plantId = (label: string) => Ids.make("plant", PROVIDER, label)

/** A plant of `GET /plants/v2/…`. */
export const toPlant = (wire: PlantV2, ctx: MapContext): Plant.Plant => ({
  id: plantId(wire.Label),
  tag: wire.Label,
  strain_name: wire.StrainName,
  growth_phase: growthPhase(wire.GrowthPhase),
  plant_batch_id: wire.PlantBatchId === null ? null : String(wire.PlantBatchId),
  location: text(wire.LocationName),
  planted_date: toDate(wire.PlantedDate),
  vegetative_date: toDate(wire.VegetativeDate),
  flowering_date: toDate(wire.FloweringDate),
  harvest_date: toDate(wire.HarvestedDate),
  facility_id: facilityIdOf(ctx),
  provider: PROVIDER,
  provider_plant_id: String(wire.Id)
})
