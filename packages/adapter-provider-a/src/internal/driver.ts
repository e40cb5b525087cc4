import type { Commands, Facility, Page, ProviderPort, Query, Session } from "@tracebridge/core"
import { Ids, ProviderError, Units } from "@tracebridge/core"
import type { Schema } from "effect"
import { Clock, Duration, Effect, Option, Schema as S } from "effect"
import type { Client } from "../ProviderAClient.js"
import type { Settings } from "../ProviderAConfig.js"
import { mapWire } from "./decode.js"
import { descriptor } from "./descriptor.js"
import type { MapContext } from "./mappers/context.js"
import { labState, PROVIDER, text } from "./mappers/context.js"
import { toItem, toLocation, toPatient, toStrain } from "./mappers/toCatalog.js"
import { toFacility } from "./mappers/toFacility.js"
import { toHarvest } from "./mappers/toHarvest.js"
import { labResultProviderId, toLabResults } from "./mappers/toLabResults.js"
import { toPackage } from "./mappers/toPackage.js"
import { toPlant } from "./mappers/toPlant.js"
import { toSale, toSalesDelivery } from "./mappers/toSale.js"
import type { TransferSource } from "./mappers/toTransfer.js"
import { toTransfer, transferProviderId } from "./mappers/toTransfer.js"
import type { Source } from "./paging.js"
import { readAcross, readAll, windows } from "./paging.js"
import { ItemV2, LocationV2, PatientV2, StrainV2 } from "./wire/Catalog.js"
import { Paged, WriteResult } from "./wire/common.js"
import { FacilityV2 } from "./wire/Facility.js"
import { HarvestV2 } from "./wire/Harvest.js"
import { LabTestResultRow } from "./wire/LabTest.js"
import type { PackageV2 } from "./wire/Package.js"
import { AvailableTag, PackageSourceHarvest, PackageV2 as PackageWire } from "./wire/Package.js"
import type { PlantV2 } from "./wire/Plant.js"
import { PlantV2 as PlantWire } from "./wire/Plant.js"
import { SalesDeliveryV2, SalesReceipt } from "./wire/Sale.js"
import type { DeliveryPackage, TransferRow } from "./wire/Transfer.js"
import {
  DeliveryPackage as DeliveryPackageWire,
  TransferDelivery,
  TransferRow as TransferRowWire
} from "./wire/Transfer.js"

const PAGE = descriptor.providerPageSize ?? 20
type Err = ProviderError.ProviderError
type FacilityRef = ProviderPort.FacilityRef

const pagedSchemas = new Map<unknown, Schema.Schema<any, any>>()
const pagedOf = <A, I>(
  schema: Schema.Schema<A, I>
): Schema.Schema<{ readonly Data: ReadonlyArray<A>; readonly Total: number }, any> => {
  let paged = pagedSchemas.get(schema)
  if (paged === undefined) {
    paged = Paged(schema)
    pagedSchemas.set(schema, paged)
  }
  return paged
}

const map = <A, B>(operation: string, f: (a: A) => B) => (a: A): Effect.Effect<B, Err> => mapWire(operation, f)(a)

/** Lab testing states that mean no result exists yet, so no results call is made. */
const untested = new Set(["NotSubmitted", "NotRequired"])

class TtlCache<A> {
  private readonly entries = new Map<string, { readonly at: number; readonly value: A }>()
  constructor(private readonly ttlMs: number, private readonly max = 10_000) {}
  get(key: string, now: number): A | undefined {
    const hit = this.entries.get(key)
    if (hit === undefined || now - hit.at > this.ttlMs) return undefined
    return hit.value
  }
  set(key: string, value: A, now: number): void {
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!)
    this.entries.set(key, { at: now, value })
  }
  delete(key: string): void {
    this.entries.delete(key)
  }
}

/** The provider_a driver: every read and write of the port, over the client. */
export const makeDriver = (client: Client, settings: Settings): ProviderPort.Driver => {
  const ctxOf = (session: Session.Session, facility: FacilityRef): MapContext => ({
    facility_id: facility.id,
    state: session.state
  })
  const license = (facility: FacilityRef) => facility.provider_facility_id

  const paged = <A, I>(
    session: Session.Session,
    facility: FacilityRef,
    path: string,
    schema: Schema.Schema<A, I>,
    operation: string,
    query: Readonly<Record<string, string | undefined>> = {}
  ): Source<A> =>
  (pageNumber, pageSize) =>
    Effect.map(
      client.get(session, path, pagedOf(schema), {
        operation,
        license: license(facility),
        query: { ...query, pageNumber, pageSize }
      }),
      (p) => ({ items: p.Data, total: p.Total })
    )

  /** Refuses a start further back than `maxLookbackDays` (one request per window: it would never end). */
  const withinLookback = (operation: string, path: string, startMs: number, now: number) =>
    startMs >= now - settings.maxLookbackDays * 86_400_000
      ? Effect.void
      : Effect.fail(
        new ProviderError.InvalidInput({
          operation,
          path,
          message: `${path} may reach at most ${settings.maxLookbackDays} days back on ${PROVIDER} ` +
            "(it is read in 24 h windows, one request each)"
        })
      )

  /** One source per endpoint, or per endpoint × lastModified window when `updated_since` is set. */
  const windowed = <A, I>(
    session: Session.Session,
    facility: FacilityRef,
    paths: ReadonlyArray<string>,
    schema: Schema.Schema<A, I>,
    operation: string,
    since: string | undefined
  ): Effect.Effect<ReadonlyArray<Source<A>>, ProviderError.InvalidInput> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (since === undefined) {
        return Effect.succeed(paths.map((path) => paged(session, facility, path, schema, operation)))
      }
      return Effect.as(
        withinLookback(operation, "updated_since", Date.parse(since), now),
        paths.flatMap((path) =>
          windows(Date.parse(since), now, settings.windowHours).map((span) =>
            paged(session, facility, path, schema, operation, span)
          )
        )
      )
    })

  const getOne = <A, I>(
    session: Session.Session,
    facility: FacilityRef,
    path: string,
    schema: Schema.Schema<A, I>,
    operation: string,
    notFound: { readonly resource: string; readonly id: string }
  ) => client.get(session, path, schema, { operation, license: license(facility), notFound })

  // ---------------------------------------------------------------- packages

  const sourceHarvestCache = new TtlCache<ReadonlyArray<number>>(Number.POSITIVE_INFINITY, 50_000)

  const labRows = (session: Session.Session, facility: FacilityRef, packageId: number) =>
    readAll(
      [paged(session, facility, "/labtests/v2/results", LabTestResultRow, "lab_results.list", {
        packageId: String(packageId)
      })],
      PAGE
    )

  const sourceHarvests = (session: Session.Session, facility: FacilityRef, wire: PackageV2) =>
    Effect.gen(function*() {
      if (
        wire.SourceHarvestCount === 0 || (wire.SourceHarvestCount === null && text(wire.SourceHarvestNames) === null)
      ) {
        return []
      }
      const key = `${session.key}|${license(facility)}|${wire.Id}`
      const cached = sourceHarvestCache.get(key, 0)
      if (cached !== undefined) return cached
      const rows = yield* readAll(
        [paged(
          session,
          facility,
          `/packages/v2/${wire.Id}/source/harvests`,
          PackageSourceHarvest,
          "packages.sourceHarvests"
        )],
        PAGE
      )
      const ids = rows.map((r) => r.HarvestId)
      sourceHarvestCache.set(key, ids, 0)
      return ids
    })

  const enrichPackage = (session: Session.Session, facility: FacilityRef, wire: PackageV2) =>
    Effect.gen(function*() {
      const state = labState(wire.LabTestingState)
      const [rows, harvestIds] = yield* Effect.all([
        state === null || untested.has(state) ? Effect.succeed([]) : labRows(session, facility, wire.Id),
        sourceHarvests(session, facility, wire)
      ], { concurrency: 2 })
      const ctx = ctxOf(session, facility)
      return yield* map("packages.list", () =>
        toPackage(wire, ctx, {
          labResults: toLabResults(rows, { ...ctx, packageLabel: wire.Label }),
          sourceHarvestIds: harvestIds
        }))(wire)
    })

  const packageByLabel = (session: Session.Session, facility: FacilityRef, label: string, id: string) =>
    getOne(session, facility, `/packages/v2/${encodeURIComponent(label)}`, PackageWire, "packages.get", {
      resource: "package",
      id
    })

  const matchesPackageWire = (q: Query.Packages) => (p: PackageV2) =>
    (q.is_on_hold === undefined || (p.IsOnHold ?? false) === q.is_on_hold) &&
    (q.lab_testing_state === undefined || labState(p.LabTestingState) === q.lab_testing_state) &&
    (q.tag === undefined || p.Label === q.tag)

  const packages: ProviderPort.ResourceDriver<any, Query.Packages> = {
    list: (session, facility, q, window) =>
      Effect.gen(function*() {
        let slice: Page.Slice<PackageV2>
        if (q.tag !== undefined) {
          const one = yield* packageByLabel(session, facility, q.tag, q.tag).pipe(
            Effect.map(Option.some),
            Effect.catchTag("ResourceNotFound", () => Effect.succeed(Option.none<PackageV2>()))
          )
          const all = Option.toArray(one).filter(matchesPackageWire(q))
          slice = { items: all.slice(window.offset, window.offset + window.limit), total: all.length }
        } else {
          const path = q.is_on_hold === true ? "/packages/v2/onhold" : "/packages/v2/active"
          const sources = yield* windowed(session, facility, [path], PackageWire, "packages.list", q.updated_since)
          if (q.is_on_hold === false || q.lab_testing_state !== undefined) {
            const all = (yield* readAll(sources, PAGE)).filter(matchesPackageWire(q))
            slice = { items: all.slice(window.offset, window.offset + window.limit), total: all.length }
          } else {
            slice = yield* readAcross(sources, window, PAGE)
          }
        }
        const items = yield* Effect.forEach(slice.items, (w) => enrichPackage(session, facility, w), { concurrency: 8 })
        return { items, total: slice.total }
      }),
    get: (session, facility, label) =>
      Effect.flatMap(
        packageByLabel(session, facility, label, Ids.make("package", PROVIDER, label)),
        (wire) => enrichPackage(session, facility, wire)
      )
  }

  // ---------------------------------------------------------------- plants

  const plantPaths = (phase: Query.Plants["growth_phase"]): ReadonlyArray<string> =>
    phase === "vegetative"
      ? ["/plants/v2/vegetative"]
      : phase === "flowering"
      ? ["/plants/v2/flowering"]
      : phase === "clone"
      ? [] // Metrc tracks immature (clone) plants only as plant batches, never as plants.
      : ["/plants/v2/vegetative", "/plants/v2/flowering"]

  const plants: ProviderPort.ResourceDriver<any, Query.Plants> = {
    list: (session, facility, q, window) =>
      Effect.gen(function*() {
        const sources = yield* windowed(
          session,
          facility,
          plantPaths(q.growth_phase),
          PlantWire,
          "plants.list",
          q.updated_since
        )
        const slice = yield* readAcross(sources, window, PAGE)
        const ctx = ctxOf(session, facility)
        const items = yield* Effect.forEach(slice.items, map("plants.list", (w: PlantV2) => toPlant(w, ctx)))
        return { items, total: slice.total }
      }),
    get: (session, facility, label) =>
      Effect.flatMap(
        getOne(session, facility, `/plants/v2/${encodeURIComponent(label)}`, PlantWire, "plants.get", {
          resource: "plant",
          id: Ids.make("plant", PROVIDER, label)
        }),
        map("plants.get", (w: PlantV2) => toPlant(w, ctxOf(session, facility)))
      )
  }

  // ---------------------------------------------------------------- harvests

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
      const rows = yield* readAll([
        paged(session, facility, "/plants/v2/inactive", PlantWire, "harvests.plants"),
        paged(session, facility, "/plants/v2/flowering", PlantWire, "harvests.plants")
      ], PAGE)
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

  const harvests: ProviderPort.ResourceDriver<any, Query.Harvests> = {
    list: (session, facility, q, window) =>
      Effect.gen(function*() {
        const sources = yield* windowed(
          session,
          facility,
          ["/harvests/v2/active"],
          HarvestV2,
          "harvests.list",
          q.updated_since
        )
        const slice = yield* readAcross(sources, window, PAGE)
        const index = slice.items.length > 0 ? yield* harvestIndex(session, facility) : new Map()
        const ctx = ctxOf(session, facility)
        const items = yield* Effect.forEach(
          slice.items,
          map("harvests.list", (w: typeof HarvestV2.Type) =>
            toHarvest(w, ctx, { sourcePlantLabels: index.get(w.Id) ?? [] }))
        )
        return { items, total: slice.total }
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

  // ---------------------------------------------------------------- lab results

  const labResultsOfPackage = (session: Session.Session, facility: FacilityRef, wire: PackageV2) =>
    Effect.flatMap(labRows(session, facility, wire.Id), (rows) => {
      const ctx = ctxOf(session, facility)
      return map("lab_results.list", () => toLabResults(rows, { ...ctx, packageLabel: wire.Label }))(rows)
    })

  const labResults: ProviderPort.ResourceDriver<any, Query.LabResults> = {
    list: (session, facility, q, window) =>
      Effect.gen(function*() {
        let all: ReadonlyArray<any>
        if (q.package_id !== undefined) {
          const label = Ids.decodeAs("package", PROVIDER, q.package_id)
          if (Option.isNone(label)) return { items: [], total: 0 }
          const wire = yield* packageByLabel(session, facility, label.value, q.package_id).pipe(
            Effect.map(Option.some),
            Effect.catchTag("ResourceNotFound", () => Effect.succeed(Option.none<PackageV2>()))
          )
          all = Option.isNone(wire) ? [] : yield* labResultsOfPackage(session, facility, wire.value)
        } else {
          // Metrc reads results per package only: read them for every tested active package.
          const sources = yield* windowed(
            session,
            facility,
            ["/packages/v2/active"],
            PackageWire,
            "lab_results.list",
            q.updated_since
          )
          const tested = (yield* readAll(sources, PAGE)).filter((p) => {
            const state = labState(p.LabTestingState)
            return state !== null && !untested.has(state)
          })
          all = (yield* Effect.forEach(tested, (p) => labResultsOfPackage(session, facility, p), { concurrency: 8 }))
            .flat()
        }
        return { items: all.slice(window.offset, window.offset + window.limit), total: all.length }
      }),
    get: (session, facility, providerId) =>
      Effect.gen(function*() {
        const notFound = ProviderError.ResourceNotFound.of("lab_result", Ids.make("lab_result", PROVIDER, providerId))
        const m = /^(\d+)-(\d+)$/.exec(providerId)
        if (m === null) return yield* notFound
        const rows = yield* labRows(session, facility, Number(m[1]))
        const mine = rows.filter((r) => labResultProviderId(r) === providerId)
        if (mine.length === 0) return yield* notFound
        let label = text(mine[0]!.SourcePackageLabel)
        if (label === null) {
          label = (yield* getOne(session, facility, `/packages/v2/${m[1]}`, PackageWire, "lab_results.get", {
            resource: "lab_result",
            id: notFound.id
          })).Label
        }
        const ctx = ctxOf(session, facility)
        const [result] = yield* map("lab_results.get", () => toLabResults(mine, { ...ctx, packageLabel: label }))(mine)
        return result!
      })
  }

  // ---------------------------------------------------------------- transfers

  type Tagged = { readonly row: TransferRow; readonly source: TransferSource }

  const transferSources = (
    direction: Query.Transfers["direction"]
  ): ReadonlyArray<readonly [string, TransferSource]> => {
    const incoming = [["/transfers/v2/incoming", "incoming"]] as const
    const outgoing = [
      ["/transfers/v2/outgoing", "outgoing"],
      ["/transfers/v2/rejected", "rejected"],
      ["/transfers/v2/templates/outgoing", "template"]
    ] as const
    return direction === "incoming" ? incoming : direction === "outgoing" ? outgoing : [...incoming, ...outgoing]
  }

  const transferRows = (
    session: Session.Session,
    facility: FacilityRef,
    direction: Query.Transfers["direction"],
    since: string | undefined
  ) =>
    Effect.gen(function*() {
      const groups = new Map<string, { rows: Array<TransferRow>; source: TransferSource }>()
      for (const [path, source] of transferSources(direction)) {
        const sources = yield* windowed(session, facility, [path], TransferRowWire, "transfers.list", since)
        const rows = yield* readAll(sources, PAGE)
        for (const row of rows) {
          // A manifest rejected by its recipient shows in both /outgoing and /rejected: rejected wins.
          const key = source === "template" ? transferProviderId(row.Id, "template") : String(row.Id)
          const group = groups.get(key)
          if (group === undefined) groups.set(key, { rows: [row], source })
          else if (source === "rejected") groups.set(key, { rows: group.rows, source })
          else if (source === group.source && !group.rows.some((r) => r.DeliveryId === row.DeliveryId)) {
            group.rows.push(row)
          }
        }
      }
      return [...groups.values()].map((g): ReadonlyArray<Tagged> => g.rows.map((row) => ({ row, source: g.source })))
    })

  /** The rows of a transfer with its deliveries resolved, and the packages of those deliveries. */
  const transferDetail = (session: Session.Session, facility: FacilityRef, tagged: ReadonlyArray<Tagged>) =>
    Effect.gen(function*() {
      const { row: first, source } = tagged[0]!
      if (source === "template") {
        const deliveries = yield* readAll([
          paged(
            session,
            facility,
            `/transfers/v2/templates/outgoing/${first.Id}/deliveries`,
            TransferDelivery,
            "transfers.deliveries"
          )
        ], PAGE)
        const rows: Array<TransferRow> = deliveries.length === 0
          ? [first]
          : deliveries.map((d) => ({
            ...first,
            DeliveryId: d.Id,
            RecipientFacilityLicenseNumber: d.RecipientFacilityLicenseNumber,
            RecipientFacilityName: d.RecipientFacilityName,
            ShipmentTypeName: d.ShipmentTypeName ?? first.ShipmentTypeName,
            EstimatedDepartureDateTime: d.EstimatedDepartureDateTime,
            EstimatedArrivalDateTime: d.EstimatedArrivalDateTime
          }))
        const packages = yield* Effect.forEach(deliveries, (d) =>
          readAll([
            paged(
              session,
              facility,
              `/transfers/v2/templates/outgoing/deliveries/${d.Id}/packages`,
              DeliveryPackageWire,
              "transfers.packages"
            )
          ], PAGE), { concurrency: 4 })
        return { rows, packages: packages.flat(), source }
      }
      const deliveryIds = [
        ...new Set(tagged.map((t) => t.row.DeliveryId).filter((id): id is number => id !== null && id > 0))
      ]
      const packages = yield* Effect.forEach(deliveryIds, (id) =>
        readAll([
          paged(session, facility, `/transfers/v2/deliveries/${id}/packages`, DeliveryPackageWire, "transfers.packages")
        ], PAGE), { concurrency: 4 })
      return { rows: tagged.map((t) => t.row), packages: packages.flat() as ReadonlyArray<DeliveryPackage>, source }
    })

  const buildTransfer = (session: Session.Session, facility: FacilityRef, tagged: ReadonlyArray<Tagged>) =>
    Effect.flatMap(
      transferDetail(session, facility, tagged),
      ({ packages, rows, source }) =>
        map("transfers.list", () => toTransfer(rows, packages, { ...ctxOf(session, facility), source }))(rows)
    )

  const transfers: ProviderPort.ResourceDriver<any, Query.Transfers> = {
    list: (session, facility, q, window) =>
      Effect.gen(function*() {
        const groups = yield* transferRows(session, facility, q.direction, q.updated_since)
        // Status depends only on the rows, so filter before reading any packages.
        const ctx = ctxOf(session, facility)
        const matching = q.status === undefined
          ? groups
          : groups.filter((g) =>
            toTransfer(g.map((t) => t.row), [], { ...ctx, source: g[0]!.source }).status === q.status
          )
        const page = matching.slice(window.offset, window.offset + window.limit)
        const items = yield* Effect.forEach(page, (g) => buildTransfer(session, facility, g), { concurrency: 4 })
        return { items, total: matching.length }
      }),
    get: (session, facility, providerId) =>
      Effect.gen(function*() {
        const isTemplate = providerId.startsWith("template-")
        const groups = yield* transferRows(session, facility, isTemplate ? "outgoing" : undefined, undefined)
        const found = groups.find((g) => transferProviderId(g[0]!.row.Id, g[0]!.source) === providerId)
        if (found === undefined) {
          return yield* ProviderError.ResourceNotFound.of("transfer", Ids.make("transfer", PROVIDER, providerId))
        }
        return yield* buildTransfer(session, facility, found)
      })
  }

  // ---------------------------------------------------------------- sales and sales deliveries

  const dated = <W, I, A extends { readonly [k: string]: unknown }>(
    path: string,
    wire: Schema.Schema<W, I>,
    operation: string,
    toCore: (w: W, ctx: MapContext) => A,
    dateOf: (a: A) => string | null
  ) =>
  (session: Session.Session, facility: FacilityRef, q: Query.Sales, window: Page.Window) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const lookback = now - settings.salesLookbackDays * 86_400_000
      const from = Math.min(
        ...[q.from, q.updated_since].filter((s): s is string => s !== undefined).map(Date.parse),
        lookback
      )
      const start = q.from !== undefined || q.updated_since !== undefined
        ? Math.max(...[q.from, q.updated_since].filter((s): s is string => s !== undefined).map(Date.parse))
        : from
      if (q.from !== undefined || q.updated_since !== undefined) {
        yield* withinLookback(
          operation,
          q.updated_since !== undefined && q.from === undefined ? "updated_since" : "from",
          start,
          now
        )
      }
      const spans = windows(start, now, settings.windowHours)
      const rows = yield* readAll(spans.map((span) => paged(session, facility, path, wire, operation, span)), PAGE)
      const ctx = ctxOf(session, facility)
      const mapped = yield* Effect.forEach(rows, map(operation, (w: W) => toCore(w, ctx)))
      const fromMs = q.from === undefined ? undefined : Date.parse(q.from)
      const toMs = q.to === undefined ? undefined : Date.parse(q.to)
      const all = mapped.filter((a) => {
        if (fromMs === undefined && toMs === undefined) return true
        const date = dateOf(a)
        if (date === null) return false
        const t = Date.parse(date)
        return (fromMs === undefined || t >= fromMs) && (toMs === undefined || t <= toMs)
      })
      return { items: all.slice(window.offset, window.offset + window.limit), total: all.length }
    })

  const byId = <W, I, A>(
    path: string,
    wire: Schema.Schema<W, I>,
    kind: Ids.Kind,
    operation: string,
    toCore: (w: W, ctx: MapContext) => A
  ) =>
  (session: Session.Session, facility: FacilityRef, id: string): Effect.Effect<A, Err> => {
    const notFound = ProviderError.ResourceNotFound.of(kind, Ids.make(kind, PROVIDER, id))
    if (!/^\d+$/.test(id)) return Effect.fail(notFound)
    return Effect.flatMap(
      getOne(session, facility, `${path}/${id}`, wire, operation, { resource: kind, id: notFound.id }),
      map(operation, (w: W) => toCore(w, ctxOf(session, facility)))
    )
  }

  const sales: ProviderPort.ResourceDriver<any, Query.Sales> = {
    list: dated("/sales/v2/receipts/active", SalesReceipt, "sales.list", toSale, (s) => s.sale_date),
    get: byId("/sales/v2/receipts", SalesReceipt, "sale", "sales.get", toSale)
  }

  const salesDeliveries: ProviderPort.ResourceDriver<any, Query.SalesDeliveries> = {
    list: dated(
      "/sales/v2/deliveries/active",
      SalesDeliveryV2,
      "sales_deliveries.list",
      toSalesDelivery,
      (d) => d.delivery_date
    ),
    get: byId("/sales/v2/deliveries", SalesDeliveryV2, "sales_delivery", "sales_deliveries.get", toSalesDelivery)
  }

  // ---------------------------------------------------------------- catalogue lists

  const simple = <W, I, A>(
    area: string,
    wire: Schema.Schema<W, I>,
    kind: Ids.Kind,
    toCore: (w: W, ctx: MapContext) => A
  ): ProviderPort.ResourceDriver<A, { readonly updated_since?: string | undefined }> => ({
    list: (session, facility, q, window) =>
      Effect.gen(function*() {
        const sources = yield* windowed(
          session,
          facility,
          [`/${area}/v2/active`],
          wire,
          `${area}.list`,
          q.updated_since
        )
        const slice = yield* readAcross(sources, window, PAGE)
        const ctx = ctxOf(session, facility)
        const items = yield* Effect.forEach(slice.items, map(`${area}.list`, (w: W) => toCore(w, ctx)))
        return { items, total: slice.total }
      }),
    get: byId(`/${area}/v2`, wire, kind, `${area}.get`, toCore)
  })

  // ---------------------------------------------------------------- facilities

  const listFacilities = (session: Session.Session): Effect.Effect<ReadonlyArray<Facility.Facility>, Err> =>
    Effect.gen(function*() {
      const rows = yield* client.get(session, "/facilities/v2/", S.Array(FacilityV2), { operation: "facilities.list" })
      const now = yield* Clock.currentTimeMillis
      const today = new Date(now).toISOString().slice(0, 10)
      return yield* Effect.forEach(
        rows,
        map("facilities.list", (w: typeof FacilityV2.Type) => toFacility(w, { state: session.state, today }))
      )
    })

  // ---------------------------------------------------------------- writes

  const todayIn = Effect.map(Clock.currentTimeMillis, (now) => new Date(now).toISOString().slice(0, 10))

  const splitPackage = (session: Session.Session, facility: FacilityRef, command: Commands.SplitPackage) =>
    Effect.gen(function*() {
      const sources: Array<PackageV2> = []
      for (const id of command.source_package_ids) {
        const label = Ids.decodeAs("package", PROVIDER, id)
        if (Option.isNone(label)) return yield* ProviderError.ResourceNotFound.of("package", id)
        sources.push(yield* packageByLabel(session, facility, label.value, id))
      }
      const refuse = (message: string, available: number) =>
        new ProviderError.InsufficientQuantity({
          package_id: command.source_package_ids[0]!,
          requested: command.quantity,
          available,
          unit_of_measure: command.unit_of_measure,
          message
        })
      const held = sources.find((s) => s.IsOnHold === true)
      if (held !== undefined) return yield* refuse(`Package ${held.Label} is on hold`, 0)
      const ingredients: Array<{ Package: string; Quantity: number; UnitOfMeasure: string }> = []
      let needed = command.quantity
      let available = 0
      for (const source of sources) {
        const inTarget = Units.convert(source.Quantity, source.UnitOfMeasureName, command.unit_of_measure)
        if (Option.isNone(inTarget)) {
          return yield* refuse(
            `Package ${source.Label} is measured in ${source.UnitOfMeasureName}, which cannot convert to ${command.unit_of_measure}`,
            available
          )
        }
        available += inTarget.value
        if (needed <= 1e-9) continue
        const take = Math.min(needed, inTarget.value)
        if (take <= 0) continue
        const inSource = Option.getOrElse(
          Units.convert(take, command.unit_of_measure, source.UnitOfMeasureName),
          () => take
        )
        ingredients.push({ Package: source.Label, Quantity: inSource, UnitOfMeasure: source.UnitOfMeasureName })
        needed -= take
      }
      if (needed > 1e-9) {
        return yield* refuse(
          `The sources hold ${available} ${command.unit_of_measure}; ${command.quantity} were asked for`,
          available
        )
      }
      const tags = yield* client.get(session, "/tags/v2/package/available", S.Array(AvailableTag), {
        operation: "split_package",
        license: license(facility)
      })
      const tag = tags[0]
      if (tag === undefined) {
        return yield* new ProviderError.ProviderRejected({
          provider: PROVIDER,
          operation: "split_package",
          messages: ["No unused package tag is available at this facility"],
          message: "provider_a has no unused package tag for the new package; order tags first"
        })
      }
      const actualDate = yield* todayIn
      const result = yield* client.post(
        session,
        "/packages/v2/",
        [{
          Tag: tag.Label,
          Location: sources[0]!.LocationName,
          Sublocation: null,
          Item: command.item_name,
          Quantity: command.quantity,
          UnitOfMeasure: command.unit_of_measure,
          PatientLicenseNumber: null,
          Note: null,
          ProductionBatchNumber: null,
          ActualDate: actualDate,
          ExpirationDate: null,
          SellByDate: null,
          UseByDate: null,
          Ingredients: ingredients
        }],
        WriteResult,
        { operation: "split_package", license: license(facility) }
      )
      const createdId = result.Ids[0]
      if (createdId === undefined) {
        return yield* new ProviderError.ProviderInvalidResponse({
          provider: PROVIDER,
          operation: "split_package",
          path: "Ids",
          message: "provider_a created a package but returned no id"
        })
      }
      const created = yield* getOne(session, facility, `/packages/v2/${createdId}`, PackageWire, "split_package", {
        resource: "package",
        id: String(createdId)
      })
      return yield* enrichPackage(session, facility, created)
    })

  const recordLabResult = (session: Session.Session, facility: FacilityRef, command: Commands.RecordLabResult) =>
    Effect.gen(function*() {
      const label = Ids.decodeAs("package", PROVIDER, command.package_id)
      if (Option.isNone(label)) return yield* ProviderError.ResourceNotFound.of("package", command.package_id)
      const target = yield* packageByLabel(session, facility, label.value, command.package_id)
      const date = command.test_date ?? (yield* todayIn)
      const result = yield* client.post(
        session,
        "/labtests/v2/record",
        [{
          Label: target.Label,
          ResultDate: `${date}T00:00:00Z`,
          DocumentFileName: null,
          DocumentFileBase64: null,
          Results: command.results.map((r) => ({
            LabTestTypeName: r.name,
            Quantity: r.value ?? 0,
            Passed: r.passed,
            Notes: r.notes
          }))
        }],
        WriteResult,
        { operation: "record_lab_result", license: license(facility) }
      )
      const resultId = result.Ids[0]
      const recorded = (yield* labResultsOfPackage(session, facility, target)).find((r) =>
        r.provider_result_id === String(resultId)
      )
      if (recorded === undefined) {
        return yield* new ProviderError.ProviderInvalidResponse({
          provider: PROVIDER,
          operation: "record_lab_result",
          path: "Ids",
          message: `provider_a recorded lab result ${resultId} but does not list it`
        })
      }
      return recorded
    })

  const createTransfer = (session: Session.Session, facility: FacilityRef, command: Commands.CreateTransfer) =>
    Effect.gen(function*() {
      if (command.shipper_facility !== license(facility)) {
        return yield* new ProviderError.InvalidInput({
          operation: "create_transfer",
          path: "shipper_facility",
          message: `shipper_facility must be this facility's licence number (${license(facility)})`
        })
      }
      const labels: Array<string> = []
      for (const [i, line] of command.packages.entries()) {
        const label = Ids.decodeAs("package", PROVIDER, line.package_id)
        if (Option.isNone(label)) return yield* ProviderError.ResourceNotFound.of("package", line.package_id)
        if (label.value !== line.tag) {
          return yield* new ProviderError.InvalidInput({
            operation: "create_transfer",
            path: `packages.${i}.tag`,
            message: `tag ${line.tag} is not the tag of package ${line.package_id}`
          })
        }
        yield* packageByLabel(session, facility, label.value, line.package_id)
        labels.push(label.value)
      }
      const today = yield* todayIn
      const result = yield* client.post(
        session,
        "/transfers/v2/templates/outgoing",
        [{
          Name: `${command.transfer_type} to ${command.recipient_facility} (${today})`,
          TransporterFacilityLicenseNumber: command.transporter,
          DriverOccupationalLicenseNumber: null,
          DriverName: command.driver_name,
          DriverLicenseNumber: null,
          PhoneNumberForQuestions: null,
          VehicleMake: command.vehicle_info,
          VehicleModel: null,
          VehicleLicensePlateNumber: null,
          Destinations: [{
            RecipientLicenseNumber: command.recipient_facility,
            TransferTypeName: command.transfer_type,
            PlannedRoute: null,
            EstimatedDepartureDateTime: command.estimated_departure,
            EstimatedArrivalDateTime: command.estimated_arrival,
            Transporters: [],
            Packages: labels.map((PackageLabel) => ({ PackageLabel, WholesalePrice: null }))
          }]
        }],
        WriteResult,
        { operation: "create_transfer", license: license(facility) }
      )
      const templateId = result.Ids[0]
      if (templateId === undefined) {
        return yield* new ProviderError.ProviderInvalidResponse({
          provider: PROVIDER,
          operation: "create_transfer",
          path: "Ids",
          message: "provider_a created a transfer template but returned no id"
        })
      }
      return yield* transfers.get(session, facility, transferProviderId(templateId, "template"))
    })

  return {
    descriptor,
    checkCredentials: (session) =>
      Effect.asVoid(client.get(session, "/facilities/v2/", S.Array(FacilityV2), { operation: "credentials.check" })),
    listFacilities,
    resources: {
      packages,
      plants,
      harvests,
      lab_results: labResults,
      transfers,
      sales,
      sales_deliveries: salesDeliveries,
      items: simple("items", ItemV2, "item", toItem),
      strains: simple("strains", StrainV2, "strain", toStrain),
      locations: simple("locations", LocationV2, "location", toLocation),
      patients: simple("patients", PatientV2, "patient", toPatient)
    },
    writes: { splitPackage, recordLabResult, createTransfer }
  }
}
