/**
 * provider_b, the state system modelled on the BioTrack classic action API: its descriptor, and
 * the driver behind the provider port.
 *
 * Reads go through the `sync_*` tables (whole tables, no pages). The adapter keeps each table per
 * connection for {@link CACHE_TTL} so that page 2 does not download everything again, filters it
 * to the facility's `location`, drops deleted rows, derives the core objects and pages locally.
 * Every write clears the connection's tables first and reads the result back afterwards.
 *
 * @since 0.1.0
 */
import type { HttpClient } from "@effect/platform"
import type { Commands, Package, ProviderDescriptor, ProviderModule, Resource, Session } from "@tracebridge/core"
import { Capabilities, Ids, Page, ProviderError, ProviderName, ProviderPort, Query } from "@tracebridge/core"
import type { Scope } from "effect"
import { Clock, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import type { Context as MapperContext } from "./internal/mappers/context.js"
import { toFacility } from "./internal/mappers/toFacility.js"
import { itemName } from "./internal/mappers/toPackage.js"
import { codeForCategory, gramsPer, inventoryType, panelTypeFor, round, uom } from "./internal/mappers/vocabulary.js"
import { WriteResult } from "./internal/wire/Envelope.js"
import type { Inventory } from "./internal/wire/Inventory.js"
import type { QaCheck } from "./internal/wire/QaSample.js"
import { QaCheckResult } from "./internal/wire/QaSample.js"
import type { SyncAction, SyncTables } from "./internal/wire/Tables.js"
import { syncAnswer } from "./internal/wire/Tables.js"
import type { Entry } from "./internal/world.js"
import * as World from "./internal/world.js"
import * as Normalize from "./Normalize.js"
import * as ProviderBClient from "./ProviderBClient.js"

const PROVIDER = "provider_b" as const

/**
 * The state hosts of the classic API (overridable per session with `baseUrl`).
 *
 * @since 0.1.0
 * @category constants
 */
export const hosts = ProviderBClient.hosts

/**
 * The login the end user enters: the company UBI (sent as `license_number`), username and password.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Credentials = ProviderBClient.Credentials

/**
 * How long a downloaded sync table is reused for the same connection.
 *
 * @since 0.1.0
 * @category constants
 */
export const CACHE_TTL = Duration.seconds(30)

/**
 * The capabilities of every served state: no sales deliveries (BioTrack has none), no plant
 * batches (plants are tagged one by one from the start) and no patients (the classic API has no
 * patient registry, only card look-ups at sale time).
 *
 * @since 0.1.0
 * @category constants
 */
export const stateCapabilities = Capabilities.make(true, {
  sales_deliveries: false,
  plant_batches: false,
  patients: false
})

/**
 * @since 0.1.0
 * @category descriptors
 */
export const descriptor: ProviderDescriptor.ProviderDescriptor = {
  name: PROVIDER,
  displayName: "BioTrack",
  credentialFields: [
    { name: "ubi", label: "Company UBI", secret: false, description: "The 9-digit business identifier" },
    { name: "username", label: "Username", secret: false },
    { name: "password", label: "Password", secret: true }
  ],
  loginKey: ["ubi", "username"],
  licenseTypes: ["Cultivation", "Manufacturing", "Testing Laboratory", "Adult-Use Retail", "Medical Retail"],
  credentials: Credentials,
  baseUrls: Object.fromEntries(Object.entries(hosts).map(([s, url]) => [s, { sandbox: url, production: url }])),
  providerPageSize: null,
  rateLimit: {
    requestsPerSecond: 5,
    concurrency: 2,
    retryAfterHeader: false,
    notes: "No published limits; conservative pacing per session"
  },
  capabilities: Object.fromEntries(Object.keys(hosts).map((s) => [s, stateCapabilities])),
  writes: ["split_package", "record_lab_result", "create_transfer"]
}

const isUsState = Schema.is(ProviderName.UsState)

type Tables = { readonly [S in SyncAction]: SyncTables<S> }

/**
 * Builds the driver over the session client.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeDriver = (client: ProviderBClient.Client): ProviderPort.Driver => {
  const cache = new Map<string, { readonly expires: number; readonly value: unknown }>()
  const prefix = (session: Session.Session) => `${session.key}|${session.baseUrl ?? ""}|${session.state}|`

  const cached = <A>(session: Session.Session, key: string, load: Effect.Effect<A, ProviderError.ProviderError>) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const hit = cache.get(prefix(session) + key)
      if (hit !== undefined && hit.expires > now) return hit.value as A
      const value = yield* load
      cache.set(prefix(session) + key, { expires: now + Duration.toMillis(CACHE_TTL), value })
      return value
    })

  const invalidate = (session: Session.Session) =>
    Effect.sync(() => {
      for (const key of [...cache.keys()]) if (key.startsWith(prefix(session))) cache.delete(key)
    })

  const sync = <S extends SyncAction>(session: Session.Session, action: S, operation: string) =>
    cached(
      session,
      action,
      client.call(session, action, { download: 1, transaction_start: 0 }, syncAnswer(action), { operation })
    ) as Effect.Effect<Tables[S], ProviderError.ProviderError>

  /** The panels of every judged sample of the login (one `inventory_qa_check` per sample). */
  const checks = (session: Session.Session, operation: string) =>
    Effect.gen(function*() {
      const { inventory_qa_sample } = yield* sync(session, "sync_inventory_qa_sample", operation)
      const judged = inventory_qa_sample.filter((s) => !s.deleted && s.result !== 0)
      const found = yield* Effect.forEach(
        judged,
        (sample) =>
          cached(
            session,
            `qa_check:${sample.inventoryid}`,
            client.call(session, "inventory_qa_check", { sample_id: sample.inventoryid }, QaCheckResult, {
              operation,
              notFound: { resource: "lab_result", id: sample.inventoryid }
            })
          ).pipe(Effect.map((answer) => [sample.inventoryid, answer.data] as const)),
        { concurrency: descriptor.rateLimit.concurrency }
      )
      return new Map<string, QaCheck>(found)
    })

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

  // ---- writes ----------------------------------------------------------------------------------

  const freshInventory = (session: Session.Session, facility: Facility, operation: string) =>
    Effect.gen(function*() {
      yield* invalidate(session)
      const { inventory } = yield* sync(session, "sync_inventory", operation)
      return World.live(inventory, facility.provider_facility_id)
    })

  const lotOf = (lots: ReadonlyArray<Inventory>, packageId: string) =>
    Option.match(Ids.decodeAs("package", PROVIDER, packageId), {
      onNone: () => Effect.fail(ProviderError.ResourceNotFound.of("package", packageId)),
      onSome: (barcode) => {
        const lot = lots.find((l) => l.id === barcode)
        return lot === undefined
          ? Effect.fail(ProviderError.ResourceNotFound.of("package", packageId))
          : Effect.succeed(lot)
      }
    })

  /** A quantity in the command's unit, in the lot's own unit; or why it cannot be. */
  const inLotUnit = (lot: Inventory, quantity: number, unit: string, packageId: string) => {
    const lotUnit = inventoryType(lot.inventorytype).unit
    const converted = unit === lotUnit
      ? quantity
      : lotUnit === "Grams" && gramsPer[unit] !== undefined
      ? round(quantity * gramsPer[unit]!)
      : undefined
    return converted === undefined
      ? Effect.fail(
        new ProviderError.InsufficientQuantity({
          package_id: packageId,
          requested: quantity,
          available: lot.remaining_quantity,
          unit_of_measure: lotUnit,
          message: `${unit} cannot be drawn from a lot counted in ${lotUnit}`
        })
      )
      : Effect.succeed(converted)
  }

  const readBack = <R extends Resource.Name>(
    session: Session.Session,
    facility: Facility,
    name: R,
    providerId: string,
    operation: string
  ) =>
    Effect.zipRight(invalidate(session), resourceDriver(name).get(session, facility, providerId)).pipe(
      Effect.catchTag("ResourceNotFound", () =>
        Effect.fail(
          new ProviderError.ProviderInvalidResponse({
            provider: PROVIDER,
            operation,
            path: "transactionid",
            message: `BioTrack accepted ${operation} but the created object is not in its sync tables`
          })
        ))
    )

  const created = (answer: WriteResult, operation: string) =>
    answer.barcode_id[0] === undefined
      ? Effect.fail(
        new ProviderError.ProviderInvalidResponse({
          provider: PROVIDER,
          operation,
          path: "barcode_id",
          message: `BioTrack answered ${operation} without the new barcode`
        })
      )
      : Effect.succeed(answer.barcode_id[0])

  const insufficientFromText =
    (packageId: string, requested: number, unit: string) =>
    <A>(self: Effect.Effect<A, ProviderError.ProviderError>): Effect.Effect<A, ProviderError.ProviderError> =>
      Effect.catchIf(
        self,
        (e): e is ProviderError.ProviderRejected =>
          e._tag === "ProviderRejected" && /insufficient|exceed|more than/i.test(e.message),
        (e) =>
          Effect.fail(
            new ProviderError.InsufficientQuantity({
              package_id: packageId,
              requested,
              available: 0,
              unit_of_measure: unit,
              message: e.messages[0] ?? e.message
            })
          )
      )

  const splitPackage = (session: Session.Session, facility: Facility, command: Commands.SplitPackage) =>
    Effect.gen(function*() {
      const operation = "split_package"
      const lots = yield* freshInventory(session, facility, operation)
      const sources = yield* Effect.forEach(command.source_package_ids, (id) => lotOf(lots, id))
      const first = sources[0]!
      const firstId = command.source_package_ids[0]!
      const unit = inventoryType(first.inventorytype).unit
      for (const [i, lot] of sources.entries()) {
        const id = command.source_package_ids[i]!
        const onHold = lot.seized || (lot.inventorystatus !== null && lot.inventorystatus !== "0")
        if (onHold || inventoryType(lot.inventorytype).unit !== unit) {
          return yield* new ProviderError.InsufficientQuantity({
            package_id: id,
            requested: command.quantity,
            available: onHold ? 0 : lot.remaining_quantity,
            unit_of_measure: inventoryType(lot.inventorytype).unit,
            message: onHold ? `${lot.id} is on hold` : `the sources mix ${unit} and another unit`
          })
        }
      }
      const wanted = yield* inLotUnit(first, command.quantity, command.unit_of_measure, firstId)
      const available = round(sources.reduce((n, l) => n + l.remaining_quantity, 0))
      if (wanted > available + 1e-9) {
        return yield* new ProviderError.InsufficientQuantity({
          package_id: firstId,
          requested: wanted,
          available,
          unit_of_measure: unit,
          message: `asked for ${wanted} ${unit} but the sources hold ${available}`
        })
      }
      let left = wanted
      const draws = sources.flatMap((lot) => {
        const take = round(Math.min(left, lot.remaining_quantity))
        left = round(left - take)
        return take > 0 ? [{ barcodeid: lot.id, remove_quantity: String(take), remove_quantity_uom: uom(unit) }] : []
      })
      const strain = command.item_strain ?? first.strain
      const sameItem = sources.length === 1 && itemName(first) === command.item_name &&
        inventoryType(first.inventorytype).category === command.item_category &&
        (first.strain ?? null) === (command.item_strain ?? null)
      const type = inventoryType(first.inventorytype).category === command.item_category
        ? first.inventorytype
        : codeForCategory(command.item_category)
      if (type === undefined) {
        return yield* new ProviderError.InvalidInput({
          operation,
          path: "item_category",
          message: `BioTrack has no inventory type for the category ${command.item_category}`
        })
      }
      const answer = yield* (sameItem
        ? client.call(session, "inventory_split", { data: draws }, WriteResult, { operation })
        : client.call(
          session,
          "inventory_convert",
          {
            data: draws,
            derivative_strain: strain,
            derivative_product: command.item_name,
            derivative_type: type,
            derivative_quantity: wanted,
            derivative_quantity_uom: uom(unit)
          },
          WriteResult,
          { operation }
        )).pipe(insufficientFromText(firstId, wanted, unit))
      const barcode = yield* created(answer, operation)
      return yield* readBack(session, facility, "packages", barcode, operation)
    }).pipe(Effect.ensuring(invalidate(session))) as Effect.Effect<Package.Package, ProviderError.ProviderError>

  const recordLabResult = (session: Session.Session, facility: Facility, command: Commands.RecordLabResult) =>
    Effect.gen(function*() {
      const operation = "record_lab_result"
      const lots = yield* freshInventory(session, facility, operation)
      const lot = yield* lotOf(lots, command.package_id)
      const panels = new Map<number, Record<string, string | number | null>>()
      for (const [i, result] of command.results.entries()) {
        const type = panelTypeFor(result.category)
        if (type === undefined) {
          return yield* new ProviderError.InvalidInput({
            operation,
            path: `results.${i}.category`,
            message: `BioTrack has no QA panel for the category ${result.category}`
          })
        }
        const panel = panels.get(type) ?? { type }
        panel[result.name] = result.value === null ? null : String(result.value)
        panels.set(type, panel)
      }
      const sample = yield* client.call(
        session,
        "inventory_qa_sample",
        {
          barcodeid: lot.id,
          lab_id: command.lab_license ?? command.lab_name,
          quantity: "0",
          quantity_uom: uom(inventoryType(lot.inventorytype).unit),
          use: command.test_type === "ResearchTesting" ? 2 : 1
        },
        WriteResult,
        { operation, notFound: { resource: "package", id: command.package_id } }
      ).pipe(
        Effect.flatMap((answer) => created(answer, operation))
      )
      yield* client.call(
        session,
        "inventory_qa_sample_results",
        {
          sample_id: sample,
          result: command.overall_passed ? 1 : -1,
          test: [...panels.values()]
        },
        WriteResult,
        { operation }
      )
      return yield* readBack(session, facility, "lab_results", sample, operation)
    }).pipe(Effect.ensuring(invalidate(session)))

  const epoch = (iso: string | null) => (iso === null ? undefined : Math.floor(Date.parse(iso) / 1000))

  const createTransfer = (session: Session.Session, facility: Facility, command: Commands.CreateTransfer) =>
    Effect.gen(function*() {
      const operation = "create_transfer"
      const lots = yield* freshInventory(session, facility, operation)
      const lines = yield* Effect.forEach(command.packages, (line) =>
        Effect.gen(function*() {
          const lot = yield* lotOf(lots, line.package_id)
          const quantity = yield* inLotUnit(lot, line.quantity, line.unit_of_measure, line.package_id)
          if (quantity > lot.remaining_quantity + 1e-9) {
            return yield* new ProviderError.InsufficientQuantity({
              package_id: line.package_id,
              requested: quantity,
              available: lot.remaining_quantity,
              unit_of_measure: inventoryType(lot.inventorytype).unit,
              message: `asked to ship ${quantity} but ${lot.id} holds ${lot.remaining_quantity}`
            })
          }
          return { barcodeid: lot.id, quantity: String(quantity), price: "0.00" }
        }))
      const departure = epoch(command.estimated_departure)
      const arrival = epoch(command.estimated_arrival)
      const manifest = yield* client.call(
        session,
        "inventory_manifest",
        {
          location: facility.provider_facility_id,
          ...(command.driver_name === null ? {} : { transporter_name: command.driver_name }),
          ...(command.vehicle_info === null ? {} : { transporter_vehicle_details: command.vehicle_info }),
          stop_overview: [{
            vendor_license: command.recipient_facility,
            stop_number: 1,
            ...(departure === undefined ? {} : { approximate_departure: departure }),
            ...(arrival === undefined ? {} : { approximate_arrival: arrival }),
            approximate_route: "",
            barcodeid: lines.map((l) => l.barcodeid)
          }]
        },
        WriteResult,
        { operation }
      )
      if (manifest.manifest_id === undefined) {
        return yield* new ProviderError.ProviderInvalidResponse({
          provider: PROVIDER,
          operation,
          path: "manifest_id",
          message: "BioTrack answered inventory_manifest without the manifest id"
        })
      }
      yield* client.call(
        session,
        "inventory_transfer_outbound",
        { manifest_id: manifest.manifest_id, data: lines },
        WriteResult,
        {
          operation
        }
      )
      return yield* readBack(session, facility, "transfers", `${manifest.manifest_id}/1`, operation)
    }).pipe(Effect.ensuring(invalidate(session)))

  const names: ReadonlyArray<Resource.Name> = [
    "packages",
    "plants",
    "harvests",
    "lab_results",
    "transfers",
    "sales",
    "items",
    "strains",
    "locations"
  ]

  return {
    descriptor,
    checkCredentials: (session) => Effect.zipRight(invalidate(session), client.login(session)),
    listFacilities,
    resources: Object.fromEntries(names.map((n) => [n, resourceDriver(n)])) as ProviderPort.ResourceDrivers,
    writes: { splitPackage, recordLabResult, createTransfer }
  }
}

/**
 * The port for provider_b, over an `HttpClient`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ProviderPort.Service, never, HttpClient.HttpClient> = Effect.map(
  ProviderBClient.make,
  (client) => ProviderPort.make(makeDriver(client))
)

/**
 * The port as a layer (for code that works with one provider at a time).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ProviderPort.ProviderPort, never, HttpClient.HttpClient> = Layer.effect(
  ProviderPort.ProviderPort,
  make
)

/**
 * provider_b as one module value: the descriptor, the port (the same against the real system and
 * the sandbox's emulator: it has no settings of its own) and the pure mappers. The registration
 * list installs it (ADR 0010).
 *
 * @since 0.1.0
 * @category modules
 */
export const module: ProviderModule.ProviderModule<HttpClient.HttpClient | Scope.Scope> = {
  descriptor,
  production: make,
  sandbox: make,
  normalize: Normalize,
  secretConfig: []
}
