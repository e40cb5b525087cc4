import type { ProviderPort, Query, Session } from "@tracebridge/core"
import { Ids, Page, ProviderError } from "@tracebridge/core"
import { Clock, Duration, Effect } from "effect"
import { TtlCache } from "../cache.js"
import { PROVIDER } from "../mappers/context.js"
import { toHarvest } from "../mappers/toHarvest.js"
import { readAll } from "../paging.js"
import type { FacilityRef, Reader } from "../reader.js"
import { map, mapRows, PAGE } from "../reader.js"
import { HarvestV2 } from "../wire/Harvest.js"
import { PlantV2 as PlantWire } from "../wire/Plant.js"

/**
 * Harvests: `/harvests/v2/active` and by id. Metrc's harvest names no plants, so each is given the
 * plants that name it, from an index of the facility's harvested and flowering plants (cached for
 * `harvestIndexTtl`).
 */
export const harvests = (
  { ctxOf, getOne, license, settings, windowed }: Reader
): ProviderPort.ResourceDriver<any, Query.Harvests> => {
  const harvestIndexCache = new TtlCache<ReadonlyMap<number, ReadonlyArray<string>>>(
    Duration.toMillis(settings.harvestIndexTtl)
  )

  /** Harvest id → labels of the plants that name it (harvested plants are inactive or flowering). */
  const harvestIndex = (session: Session.Session, facility: FacilityRef) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const key = `${session.key}|${license(facility)}`
      const cached = harvestIndexCache.get(key, now)
      if (cached !== undefined) return cached
      const sources = yield* windowed(
        session,
        facility,
        ["/plants/v2/inactive", "/plants/v2/flowering"],
        PlantWire,
        "harvests.plants",
        undefined
      )
      const rows = yield* readAll(sources, PAGE)
      const index = new Map<number, Array<string>>()
      for (const plant of rows) {
        if (plant.HarvestId === null) continue
        const labels = index.get(plant.HarvestId) ?? []
        if (!labels.includes(plant.Label)) labels.push(plant.Label)
        index.set(plant.HarvestId, labels)
      }
      harvestIndexCache.set(key, index, now)
      return index as ReadonlyMap<number, ReadonlyArray<string>>
    })

  return {
    list: (session, facility, q, window) =>
      Effect.gen(function*() {
        const sources = yield* windowed(
          session,
          facility,
          // finished harvests (all packaged, or discontinued) stay readable: Metrc moves them to /inactive
          ["/harvests/v2/active", "/harvests/v2/inactive"],
          HarvestV2,
          "harvests.list",
          q.updated_since
        )
        // every row is read and mapped, so that the total counts only what the pages deliver
        const rows = yield* readAll(sources, PAGE)
        const index = rows.length > 0 ? yield* harvestIndex(session, facility) : new Map()
        const ctx = ctxOf(session, facility)
        const items = yield* mapRows(session, "harvests.list", rows, (w: typeof HarvestV2.Type) =>
          toHarvest(w, ctx, { sourcePlantLabels: index.get(w.Id) ?? [] }))
        return Page.sliceOf(items, window)
      }),
    get: (session, facility, id) =>
      Effect.gen(function*() {
        const notFound = ProviderError.ResourceNotFound.of("harvest", Ids.make("harvest", PROVIDER, id))
        if (!/^\d+$/.test(id)) return yield* notFound
        const wire = yield* getOne(session, facility, `/harvests/v2/${id}`, HarvestV2, "harvests.get", {
          resource: "harvest",
          id: notFound.id
        })
        const index = yield* harvestIndex(session, facility)
        return yield* map("harvests.get", (w: typeof HarvestV2.Type) =>
          toHarvest(w, ctxOf(session, facility), { sourcePlantLabels: index.get(w.Id) ?? [] }))(wire)
      })
  }
}
