/**
 * The plant scenario: `plant_phase_advanced`, a plant moving to its next growth phase (clone to
 * vegetative, vegetative to flowering). No event.
 *
 * @since 0.1.0
 */
import type { Plant } from "@tracebridge/core"
import { ProviderError, Transitions } from "@tracebridge/core"
import { Either, Schema } from "effect"
import type { FacilityData } from "../World.js"
import { define, exhausted, fail, iso, transition } from "./common.js"

/**
 * `plant_phase_advanced`: the plant named (or the first unharvested one before flowering) moves to
 * its next growth phase, dated today.
 *
 * @since 0.1.0
 * @category scenarios
 */
export const phaseAdvanced = define({
  params: Schema.Struct({ plant_id: Schema.optional(Schema.String) }),
  run: (world, params, at) => {
    let data: FacilityData | undefined
    let plant: Plant.Plant | undefined
    for (const d of world.facilities) {
      plant = d.plants.find((p) =>
        params.plant_id === undefined
          ? p.harvest_date === null && p.growth_phase !== "flowering"
          : p.id === params.plant_id
      )
      if (plant !== undefined) {
        data = d
        break
      }
    }
    if (plant === undefined || data === undefined) {
      return params.plant_id !== undefined
        ? fail(ProviderError.ResourceNotFound.of("plant", params.plant_id))
        : exhausted("plant_phase_advanced", "plant before flowering", "plant_id")
    }
    const to = plant.growth_phase === "clone" ? "vegetative" : "flowering"
    const moved = transition(Transitions.growthPhase, plant.growth_phase, to)
    if (Either.isLeft(moved)) return Either.left(moved.left)
    const day = iso(at).slice(0, 10)
    const id = plant.id
    data.plants = data.plants.map((p) =>
      p.id === id
        ? { ...p, growth_phase: to, ...(to === "vegetative" ? { vegetative_date: day } : { flowering_date: day }) }
        : p
    )
    world.modified.set(id, Math.floor(at / 1000) * 1000)
    return Either.right({ change: null, loginRequired: false })
  }
})
