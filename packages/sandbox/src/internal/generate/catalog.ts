/**
 * The catalogue of each facility: its strains, its items (four per strain, for the first two
 * strains) and its locations. Strains draw from their own stream; items and locations draw nothing.
 * Each record was last changed on a day of its own, weeks before the reference date (strains, then
 * locations, then items), so that a complete read must walk many lastModified windows.
 */
import type { Item, Location, Strain } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import * as Seed from "../../Seed.js"
import type { Context } from "./context.js"
import { DAY, HOUR, scopedOf, touch } from "./context.js"

const strainNames = [
  "Blue Dream",
  "Sour Diesel",
  "Gelato",
  "OG Kush",
  "Northern Lights",
  "Girl Scout Cookies",
  "Jack Herer",
  "Wedding Cake"
]

/** Each strain's items: name suffix, category, unit of measure and unit weight. */
const itemDefs: ReadonlyArray<readonly [string, string, string, number | null]> = [
  ["Buds", "Flower", "Grams", null],
  ["Shake", "Shake/Trim", "Grams", null],
  ["Pre-Roll 1g", "Pre-Roll", "Grams", null],
  ["Live Resin", "Concentrate", "Grams", null]
]

/** Fills in the strains, items and locations of every facility of the world. */
export const generate = (ctx: Context): void => {
  const { profile, provider, ref, seed, world } = ctx
  for (const [f, data] of world.facilities.entries()) {
    const scoped = scopedOf(ctx, data.facility)
    data.strains = strainNames.slice(0, 4).map((name, i): Strain.Strain => {
      const pick = Seed.prng(seed, `strain:${f}`, i)
      const indica = Math.round(pick() * 10) * 10
      const id = String(profile.numeric("strain", f, i + 1))
      return {
        id: Ids.make("strain", provider, id),
        name,
        indica_percentage: indica,
        sativa_percentage: 100 - indica,
        genetics: `${indica}% Indica / ${100 - indica}% Sativa`,
        ...scoped,
        provider_strain_id: id
      }
    })
    data.strains.forEach((strain, i) => touch(ctx, strain.id, ref - (52 - i) * DAY - f * HOUR))
    data.items = data.strains.slice(0, 2).flatMap((strain, s) =>
      itemDefs.map(([suffix, category, unit, weight], i): Item.Item => {
        const id = String(profile.numeric("item", f, s * 10 + i + 1))
        return {
          id: Ids.make("item", provider, id),
          name: `${strain.name} ${suffix}`,
          category,
          strain: strain.name,
          unit_of_measure: unit,
          unit_weight: weight,
          ...scoped,
          provider_item_id: id
        }
      })
    )
    data.locations = ["Vault", data.role === "cultivation" ? "Flower Room" : "Sales Floor", "Quarantine"].map(
      (name, i): Location.Location => {
        const id = String(profile.numeric("location", f, i + 1))
        return {
          id: Ids.make("location", provider, id),
          name,
          location_type: "Default",
          ...scoped,
          provider_location_id: id
        }
      }
    )
    data.locations.forEach((location, i) => touch(ctx, location.id, ref - (47 - i) * DAY - f * HOUR))
    data.items.forEach((item, i) => touch(ctx, item.id, ref - (44 - i) * DAY - f * HOUR))
  }
}
