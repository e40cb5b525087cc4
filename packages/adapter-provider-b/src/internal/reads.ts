/**
 * The reads of provider_b: every resource derived from the sync tables of a connection, filtered
 * to the facility's `location` (deleted rows dropped), filtered by the query and paged locally;
 * and the login's facilities from `vendor`.
 */
import type { ProviderPort, Resource, Session } from "@tracebridge/core"
import { Ids, Page, ProviderError, ProviderName, Query } from "@tracebridge/core"
import { Effect, Redacted, Schema } from "effect"
import { PROVIDER } from "./descriptor.js"
import type { Context as MapperContext } from "./mappers/context.js"
import { toFacility } from "./mappers/toFacility.js"
import type { SyncTablesCache } from "./tables.js"
import type { Entry } from "./world.js"
import * as World from "./world.js"

const isUsState = Schema.is(ProviderName.UsState)

/** The reads of the driver. */
export interface Reads {
  /** The driver of one resource: `list` (filtered and paged locally) and `get`. */
  readonly resourceDriver: <R extends Resource.Name>(
    name: R
  ) => ProviderPort.ResourceDriver<Resource.Item<R>, Resource.Filters<R>>
  /** The login's facilities: the live `vendor` rows under its UBI. */
  readonly listFacilities: ProviderPort.Driver["listFacilities"]
}

/** The reads over a connection's sync tables. */
export const make = (tables: SyncTablesCache): Reads => {
  const { checks, sync } = tables

  type Facility = ProviderPort.FacilityRef
  const ctxOf = (facility: Facility): MapperContext => ({ facility_id: facility.id })

  const labEntries = (session: Session.Session, facility: Facility, operation: string) =>
    Effect.gen(function*() {
      const { inventory_qa_sample } = yield* sync(session, "sync_inventory_qa_sample", operation)
      const { vendor } = yield* sync(session, "sync_vendor", operation)
      const found = yield* checks(session, operation)
      return World.labResults(inventory_qa_sample, found, vendor, facility.provider_facility_id, ctxOf(facility))
    })

  const entries: {
    readonly [R in Resource.Name]?: (
      session: Session.Session,
      facility: Facility,
      operation: string
    ) => Effect.Effect<Array<Entry<Resource.Item<R>>>, ProviderError.ProviderError>
  } = {
    packages: (session, facility, operation) =>
      Effect.gen(function*() {
        const { inventory } = yield* sync(session, "sync_inventory", operation)
        const { plant_derivative } = yield* sync(session, "sync_plant_derivative", operation)
        const { inventory_qa_sample } = yield* sync(session, "sync_inventory_qa_sample", operation)
        const results = (yield* labEntries(session, facility, operation)).map((e) => e.value)
        return World.packages(
          inventory,
          plant_derivative,
          inventory_qa_sample,
          results,
          facility.provider_facility_id,
          ctxOf(facility)
        )
      }),
    plants: (session, facility, operation) =>
      Effect.gen(function*() {
        const { plant } = yield* sync(session, "sync_plant", operation)
        const { plant_room } = yield* sync(session, "sync_plant_room", operation)
        const { plant_derivative } = yield* sync(session, "sync_plant_derivative", operation)
        return World.plants(plant, plant_room, plant_derivative, facility.provider_facility_id, ctxOf(facility))
      }),
    harvests: (session, facility, operation) =>
      Effect.gen(function*() {
        const { plant_derivative } = yield* sync(session, "sync_plant_derivative", operation)
        const { plant } = yield* sync(session, "sync_plant", operation)
        return World.harvests(plant_derivative, plant, facility.provider_facility_id, ctxOf(facility))
      }),
    lab_results: labEntries,
    transfers: (session, facility, operation) =>
      Effect.gen(function*() {
        const manifests = yield* sync(session, "sync_manifest", operation)
        const { inventory_transfer } = yield* sync(session, "sync_inventory_transfer", operation)
        const { inventory_transfer_inbound } = yield* sync(session, "sync_inventory_transfer_inbound", operation)
        return World.transfers(
          { ...manifests, inventory_transfer, inventory_transfer_inbound },
          facility.provider_facility_id,
          ctxOf(facility)
        )
      }),
    sales: (session, facility, operation) =>
      Effect.gen(function*() {
        const { sale } = yield* sync(session, "sync_sale", operation)
        const { inventory } = yield* sync(session, "sync_inventory", operation)
        return World.sales(sale, inventory, facility.provider_facility_id, ctxOf(facility))
      }),
    items: (session, facility, operation) =>
      Effect.map(
        sync(session, "sync_inventory", operation),
        ({ inventory }) => World.items(inventory, facility.provider_facility_id, ctxOf(facility))
      ),
    strains: (session, facility, operation) =>
      Effect.gen(function*() {
        const { inventory } = yield* sync(session, "sync_inventory", operation)
        const { plant } = yield* sync(session, "sync_plant", operation)
        return World.strains(inventory, plant, facility.provider_facility_id, ctxOf(facility))
      }),
    locations: (session, facility, operation) =>
      Effect.gen(function*() {
        const { inventory_room } = yield* sync(session, "sync_inventory_room", operation)
        const { plant_room } = yield* sync(session, "sync_plant_room", operation)
        return World.locations(inventory_room, plant_room, facility.provider_facility_id, ctxOf(facility))
      })
  }

  const filters: {
    readonly [R in Resource.Name]?: (q: Resource.Filters<R>, license: string) => (a: Resource.Item<R>) => boolean
  } = {
    packages: (q) => Query.matchesPackage(q),
    plants: (q) => Query.matchesPlant(q),
    lab_results: (q) => Query.matchesLabResult(q),
    transfers: (q, license) => (t) =>
      Query.matchesTransfer(q)(t) &&
      (q.direction === undefined || (q.direction === "outgoing") === (t.shipper_facility === license)),
    sales: (q) => Query.matchesSale(q)
  }

  const resourceDriver = <R extends Resource.Name>(
    name: R
  ): ProviderPort.ResourceDriver<Resource.Item<R>, Resource.Filters<R>> => {
    const all = entries[name]!
    const kind = ({
      packages: "package",
      plants: "plant",
      harvests: "harvest",
      lab_results: "lab_result",
      transfers: "transfer",
      sales: "sale",
      sales_deliveries: "sales_delivery",
      items: "item",
      strains: "strain",
      locations: "location",
      patients: "patient"
    } as const)[name]
    return {
      list: (session, facility, query, window) =>
        Effect.map(all(session, facility, `${name}.list`), (found) => {
          const since = (query as { readonly updated_since?: string }).updated_since
          const sinceSeconds = since === undefined ? undefined : Date.parse(since) / 1000
          const matches = filters[name]?.(query, facility.provider_facility_id) ?? (() => true)
          const kept = found
            .filter((e) => sinceSeconds === undefined || (e.updated !== null && e.updated >= sinceSeconds))
            .map((e) => e.value)
            .filter(matches)
          return Page.sliceOf(kept, window)
        }),
      get: (session, facility, providerId) =>
        Effect.flatMap(all(session, facility, `${name}.get`), (found) => {
          const wanted = Ids.make(kind, PROVIDER, providerId)
          const hit = found.find((e) => (e.value as { readonly id: string }).id === wanted)
          return hit === undefined
            ? Effect.fail(ProviderError.ResourceNotFound.of(kind, wanted))
            : Effect.succeed(hit.value)
        })
    }
  }

  const listFacilities = (session: Session.Session) =>
    Effect.gen(function*() {
      const { vendor } = yield* sync(session, "sync_vendor", "facilities.list")
      const credentials = Redacted.value(session.credentials)
      return vendor
        .filter((v) => !v.deleted && v.ubi === credentials["ubi"])
        .map((v) => toFacility(v, session.state, isUsState))
    })

  return { resourceDriver, listFacilities }
}
