import type { Harvest } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { toDate } from "../time.js"
import type { HarvestV2 } from "../wire/Harvest.js"
import type { MapContext } from "./context.js"
import { facilityIdOf, PROVIDER, required, splitLabels } from "./context.js"
import { plantId } from "./toPlant.js"

/**
 * A harvest of `GET /harvests/v2/…`. Metrc's harvest names no plants; plants name their harvest
 * (`HarvestId`), so the driver passes the labels of the plants that do (`sourcePlantLabels`).
 */
export const toHarvest = (
  wire: HarvestV2,
  ctx: MapContext,
  extras: { readonly sourcePlantLabels?: ReadonlyArray<string> } = {}
): Harvest.Harvest => {
  const strains = splitLabels(wire.SourceStrainNames)
  return {
    id: Ids.make("harvest", PROVIDER, String(wire.Id)),
    harvest_name: wire.Name,
    harvest_type: wire.HarvestType,
    strain_name: strains.length > 0 ? strains.join(", ") : "",
    harvested_date: required(toDate(wire.HarvestStartDate), "HarvestStartDate"),
    current_weight: wire.CurrentWeight,
    unit_of_measure: wire.UnitOfWeightName,
    total_waste_weight: wire.TotalWasteWeight,
    plant_count: wire.PlantCount,
    source_plant_ids: (extras.sourcePlantLabels ?? []).map(plantId),
    facility_id: facilityIdOf(ctx),
    provider: PROVIDER,
    provider_harvest_id: String(wire.Id)
  }
}
