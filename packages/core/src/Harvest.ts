/**
 * A harvest batch: the plants cut together and what they weigh (spec §2).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { HarvestId, PlantId } from "./Ids.js"
import { facilityScoped, ProviderObjectId } from "./internal/fields.js"
import { FiniteNumber, IsoDate } from "./Schemas.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export const Harvest = Schema.Struct({
  id: HarvestId,
  harvest_name: Schema.String,
  harvest_type: Schema.String.annotations({ description: "e.g. WholePlant, Manicure" }),
  strain_name: Schema.String,
  harvested_date: IsoDate,
  current_weight: FiniteNumber,
  unit_of_measure: Schema.String,
  total_waste_weight: FiniteNumber,
  plant_count: FiniteNumber,
  source_plant_ids: Schema.Array(PlantId),
  ...facilityScoped,
  provider_harvest_id: ProviderObjectId
}).annotations({ identifier: "Harvest", description: "A harvest batch" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Harvest extends Schema.Schema.Type<typeof Harvest> {}
