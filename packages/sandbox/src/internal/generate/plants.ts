/**
 * The cultivator's plants and harvests: eight vegetative plants, eight flowering, and
 * {@link harvestCount} harvests of three plants each. Every plant and harvest draws from its own
 * stream.
 */
import type { Harvest, Plant } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import * as Seed from "../../Seed.js"
import type { FacilityData } from "../../World.js"
import type { Context } from "./context.js"
import { DAY, HOUR, isoDay, round, scopedOf, touch } from "./context.js"

/** How many harvests the cultivator has. */
export const harvestCount = 4

/** Adds the plants and harvests of the cultivator. */
export const generate = (ctx: Context, cultivator: FacilityData): void => {
  const { profile, provider, ref, seed } = ctx
  const plantAt = (n: number, phase: "vegetative" | "flowering", harvested: number | null): Plant.Plant => {
    const pick = Seed.prng(seed, "plant", n)
    const tag = profile.tag("plant", 0, n)
    const strain = cultivator.strains[Math.floor(pick() * 2)]!.name
    const planted = ref - (60 + Math.floor(pick() * 60)) * DAY
    const ids = profile.plantIds(tag, n)
    return {
      id: Ids.make("plant", provider, tag),
      tag,
      strain_name: strain,
      growth_phase: phase,
      plant_batch_id: ids.plantBatchId,
      location: "Flower Room",
      planted_date: isoDay(planted),
      vegetative_date: isoDay(planted + 14 * DAY),
      flowering_date: phase === "flowering" ? isoDay(planted + 45 * DAY) : null,
      harvest_date: harvested === null ? null : isoDay(harvested),
      ...scopedOf(ctx, cultivator.facility),
      provider_plant_id: ids.providerId
    }
  }
  let plantNo = 0
  for (let i = 0; i < 8; i++) {
    const p = plantAt(++plantNo, "vegetative", null)
    cultivator.plants.push(p)
    touch(ctx, p.id, ref - (10 + i) * HOUR)
  }
  for (let i = 0; i < 8; i++) {
    const p = plantAt(++plantNo, "flowering", null)
    cultivator.plants.push(p)
    touch(ctx, p.id, ref - (20 + i) * HOUR)
  }
  for (let h = 0; h < harvestCount; h++) {
    const pick = Seed.prng(seed, "harvest", h)
    const harvestedAt = ref - (30 - h * 5) * DAY
    const cut = Array.from({ length: 3 }, () => plantAt(++plantNo, "flowering", harvestedAt))
    cultivator.plants.push(...cut)
    for (const p of cut) touch(ctx, p.id, harvestedAt)
    const providerId = String(profile.numeric("harvest", 0, h + 1))
    const strain = cut[0]!.strain_name
    const harvest: Harvest.Harvest = {
      id: Ids.make("harvest", provider, providerId),
      harvest_name: `${isoDay(harvestedAt)}-${strain}-${h + 1}`,
      harvest_type: h % 3 === 2 ? "Manicure" : "WholePlant",
      strain_name: strain,
      harvested_date: isoDay(harvestedAt),
      current_weight: round(200 + pick() * 300),
      unit_of_measure: "Grams",
      total_waste_weight: round(50 + pick() * 50),
      plant_count: cut.length,
      source_plant_ids: cut.map((p) => p.id),
      ...scopedOf(ctx, cultivator.facility),
      provider_harvest_id: providerId
    }
    cultivator.harvests.push(harvest)
    touch(ctx, harvest.id, harvestedAt + DAY)
  }
}
