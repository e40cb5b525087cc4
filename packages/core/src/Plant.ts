/**
 * A tracked plant (spec §2).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { PlantId } from "./Ids.js"
import { facilityScoped, nullableString, ProviderObjectId } from "./internal/fields.js"
import { IsoDate } from "./Schemas.js"

/**
 * `clone` → `vegetative` → `flowering` (see `Transitions.growthPhase`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const GrowthPhase = Schema.Literal("clone", "vegetative", "flowering").annotations({ identifier: "GrowthPhase" })

/**
 * @since 0.1.0
 * @category models
 */
export type GrowthPhase = typeof GrowthPhase.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const Plant = Schema.Struct({
  id: PlantId,
  tag: Schema.String,
  strain_name: Schema.String,
  growth_phase: GrowthPhase,
  plant_batch_id: nullableString,
  location: nullableString,
  planted_date: Schema.NullOr(IsoDate),
  vegetative_date: Schema.NullOr(IsoDate),
  flowering_date: Schema.NullOr(IsoDate),
  harvest_date: Schema.NullOr(IsoDate),
  ...facilityScoped,
  provider_plant_id: ProviderObjectId
}).annotations({ identifier: "Plant", description: "A tracked plant" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Plant extends Schema.Schema.Type<typeof Plant> {}
