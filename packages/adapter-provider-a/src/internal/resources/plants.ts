import type { ProviderPort, Query } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { Effect } from "effect"
import { byLabel, departuresOf } from "../departures.js"
import { PROVIDER } from "../mappers/context.js"
import { toPlant } from "../mappers/toPlant.js"
import type { Reader } from "../reader.js"
import { map, mappedWindow } from "../reader.js"
import type { PlantV2 } from "../wire/Plant.js"
import { PlantV2 as PlantWire } from "../wire/Plant.js"

const plantPaths = (phase: Query.Plants["growth_phase"]): ReadonlyArray<string> =>
  phase === "vegetative"
    ? ["/plants/v2/vegetative"]
    : phase === "flowering"
    ? ["/plants/v2/flowering"]
    : phase === "clone"
    ? [] // Metrc tracks immature (clone) plants only as plant batches, never as plants.
    : ["/plants/v2/vegetative", "/plants/v2/flowering"]

/**
 * Plants: the vegetative and flowering lists (by growth phase), by label. Departures:
 * `/plants/v2/inactive`, where Metrc moves a harvested or destroyed plant (labels only).
 */
export const plants = (reader: Reader): ProviderPort.ResourceDriver<any, Query.Plants> => ({
  list: (session, facility, q, window) =>
    Effect.gen(function*() {
      const { ctxOf, windowed } = reader
      const sources = yield* windowed(
        session,
        facility,
        plantPaths(q.growth_phase),
        PlantWire,
        "plants.list",
        q.updated_since
      )
      const ctx = ctxOf(session, facility)
      return yield* mappedWindow(session, "plants.list", sources, window, (w: PlantV2) => toPlant(w, ctx))
    }),
  departures: departuresOf(reader, "/plants/v2/inactive", "plant", byLabel),
  get: (session, facility, label) =>
    Effect.flatMap(
      reader.getOne(session, facility, `/plants/v2/${encodeURIComponent(label)}`, PlantWire, "plants.get", {
        resource: "plant",
        id: Ids.make("plant", PROVIDER, label)
      }),
      map("plants.get", (w: PlantV2) => toPlant(w, reader.ctxOf(session, facility)))
    )
})
