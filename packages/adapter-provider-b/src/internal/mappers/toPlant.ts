/**
 * plant row → Plant.
 */
import type { Plant } from "@tracebridge/core"
import type { Plant as PlantRow, PlantDerivative } from "../wire/Plant.js"
import type { Context } from "./context.js"
import { id, PROVIDER } from "./context.js"
import { isoDate } from "./vocabulary.js"

/**
 * The growth phase from the plant's state codes. Clones are inventory (type 7) in BioTrack until
 * they become plants, so a plant is never `clone`. A growing plant (`state` 0) is `vegetative`,
 * or `flowering` once a harvest is scheduled; any later state (harvested, drying, cured) was
 * flowering when it was cut.
 */
export const growthPhase = (row: PlantRow): Plant.GrowthPhase =>
  row.state === 0 ? (row.harvestscheduled ? "flowering" : "vegetative") : "flowering"

export interface PlantExtras {
  /** The plant room's name, when the room is known. */
  readonly roomName?: string | undefined
  /** Derivative rows of this plant: the earliest is its harvest. */
  readonly derivatives?: ReadonlyArray<PlantDerivative>
}

export const toPlant = (row: PlantRow, ctx: Context, extras: PlantExtras = {}): Plant.Plant => {
  const cuts = (extras.derivatives ?? [])
    .filter((d) => d.plantid === row.id)
    .map((d) => d.sessiontime)
    .filter((t): t is number => t !== null)
  return {
    id: id("plant", row.id),
    tag: row.id,
    strain_name: row.strain,
    growth_phase: growthPhase(row),
    plant_batch_id: null,
    location: extras.roomName ?? row.room,
    planted_date: null,
    vegetative_date: null,
    flowering_date: row.harvestscheduled ? isoDate(row.harvestscheduletime) : null,
    harvest_date: cuts.length > 0 ? isoDate(Math.min(...cuts)) : null,
    facility_id: ctx.facility_id,
    provider: PROVIDER,
    provider_plant_id: row.id
  }
}
