/**
 * The GET endpoints of the emulator, as Metrc's v2 answers them:
 *
 * - lists come in the page wrapper (`Data`, `Total`, `TotalRecords`, `PageSize`, `RecordsOnPage`,
 *   `Page`, `CurrentPage`, `TotalPages`): all records when no `pageSize` is given, else pages of
 *   at most 20 (`pageNumber` from 1);
 * - `lastModifiedStart`/`lastModifiedEnd` select the records changed in `[start, end)`, a window of
 *   at most 24 hours; sales receipts and deliveries require one. Without a window, a list that
 *   takes one answers only the records changed in the last 24 hours, as Metrc does ("fetching data
 *   returns only records which have changed in the past 24 hours"; a live NY client read 231 of
 *   1503 packages without a window): a reader must walk the windows to see a facility's history.
 *   Lists Metrc documents without the parameters (patients, rejected transfers, templates) ignore
 *   them and answer every record;
 * - a record by id (or label) is a bare object, or the 404.
 */
import type { Item, Location, Package, Patient, Plant, Sale, Strain } from "@tracebridge/core"
import type { Ids } from "@tracebridge/core"
import type { FacilityData, World } from "../../World.js"
import { transfersOf } from "../../World.js"
import * as Writes from "../../Writes.js"
import * as Lookup from "./lookup.js"
import { json, message, notFound, one } from "./responses.js"
import type { Params } from "./route.js"
import type { Scope, Seen } from "./serialize.js"
import * as Serialize from "./serialize.js"

/** What a GET endpoint of a facility reads. */
export interface Context extends Scope {
  readonly params: Params
  readonly query: URLSearchParams
  /** The sandbox's clock (epoch ms). */
  readonly now: number
}

/** A GET endpoint of a facility (`?licenseNumber=`). */
export type Handler = (ctx: Context) => Response

/** What a GET endpoint that names no facility reads. */
export interface OpenContext {
  readonly world: World
  readonly query: URLSearchParams
}

/** A GET endpoint that names no facility (`/facilities/v2/`, `/unitsofmeasure/v2/active`). */
export type OpenHandler = (ctx: OpenContext) => Response

// ------------------------------------------------------------------ paging

const HOUR = 3_600_000

/** The records of a list, and how to put one on the wire: only the page asked for is written. */
interface Rows {
  readonly items: ReadonlyArray<{ readonly id: string }>
  readonly wire: (item: any) => unknown
}

const rows = <A extends { readonly id: string }>(items: ReadonlyArray<A>, wire: (a: A) => unknown): Rows => ({
  items,
  wire: (item: A) => wire(item)
})

/** Records already written, keyed by ids of their own (no record of the world changes them). */
const written = (key: string, list: ReadonlyArray<unknown>): Rows =>
  rows(list.map((wire, i) => ({ id: `${key}:${i}`, wire })), (row) => row.wire)

/**
 * How a list takes lastModified windows: `optional` (without one, the last 24 hours), `required`
 * (without one, a 400) or `ignored` (Metrc documents no window for it: every record, whatever the
 * parameters).
 */
type Windows = "optional" | "required" | "ignored"

/** A v2 list: the lastModified window, then the page. */
const page = (
  ctx: { readonly world: World; readonly now: number },
  list: Rows,
  q: URLSearchParams,
  windows: Windows = "ignored"
): Response => {
  const { now, world } = ctx
  const start = q.get("lastModifiedStart")
  const end = q.get("lastModifiedEnd")
  const changedIn = (s: number, e: number) => Lookup.changedIn(world, list.items, s, e)
  let selected = list.items
  if (windows === "ignored") {
    // every record
  } else if (start !== null || end !== null) {
    const s = Date.parse(start ?? "")
    const e = Date.parse(end ?? "")
    if (Number.isNaN(s) || Number.isNaN(e) || e < s) {
      return message(400, "The lastModifiedStart and lastModifiedEnd parameters are invalid.")
    }
    if (e - s > 24 * HOUR) {
      return message(400, "The time span between lastModifiedStart and lastModifiedEnd may not exceed 24 hours.")
    }
    selected = changedIn(s, e)
  } else if (windows === "required") {
    return message(400, "The lastModifiedStart and lastModifiedEnd parameters are required.")
  } else {
    selected = changedIn(now - 24 * HOUR, now + 1000)
  }
  const size = q.get("pageSize")
  const total = selected.length
  if (size === null) {
    return json({
      Data: selected.map(list.wire),
      Total: total,
      TotalRecords: total,
      PageSize: total,
      RecordsOnPage: total,
      Page: 1,
      CurrentPage: 1,
      TotalPages: total === 0 ? 0 : 1
    })
  }
  const pageSize = Number(size)
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 20) {
    return message(400, "The pageSize parameter must be between 1 and 20.")
  }
  const pageNumber = Number(q.get("pageNumber") ?? "1")
  if (!Number.isInteger(pageNumber) || pageNumber < 1) {
    return message(400, "The pageNumber parameter must be 1 or more.")
  }
  const data = selected.slice((pageNumber - 1) * pageSize, pageNumber * pageSize).map(list.wire)
  return json({
    Data: data,
    Total: total,
    TotalRecords: total,
    PageSize: pageSize,
    RecordsOnPage: data.length,
    Page: pageNumber,
    CurrentPage: pageNumber,
    TotalPages: Math.ceil(total / pageSize)
  })
}

// ------------------------------------------------------------------ endpoints that name no facility

/** `GET /facilities/v2/`: every facility of the login, a bare array. */
export const facilities: OpenHandler = ({ world }) => json(world.facilities.map(Serialize.facility))

/** `GET /items|strains|locations/v2/inactive` (no lastModified window): the world deletes no catalogue entries. */
export const inactiveCatalogue: Handler = (ctx) => page(ctx, written("inactive", []), ctx.query)

/** `GET /unitsofmeasure/v2/active`: a bare array. */
export const unitsOfMeasure: OpenHandler = () => json(Serialize.UNITS)

// ------------------------------------------------------------------ packages

const packageRows = (ctx: Context, list: ReadonlyArray<Package.Package>) =>
  rows(list, (p: Package.Package) => Serialize.pkg(ctx, p))

/** A package by Metrc id or label. */
const packageByIdOrLabel = Lookup.byKey((p: Package.Package) => [p.provider_package_id, p.tag])
/** A package by Metrc id. */
const packageById = Lookup.byKey((p: Package.Package) => [p.provider_package_id])

const packageOf = (data: FacilityData, key: string) => packageByIdOrLabel(data.packages, key)

/** `GET /packages/v2/active`. */
export const activePackages: Handler = (ctx) => page(ctx, packageRows(ctx, ctx.data.packages), ctx.query, "optional")

/**
 * `GET /packages/v2/onhold`: the packages whose `IsOnHold` is set (an administrative hold). The
 * research does not say that Metrc lists investigations and recalls here, so the emulator does not:
 * a package on them is found in `/active` by its own flags.
 */
export const onHoldPackages: Handler = (ctx) =>
  page(
    ctx,
    packageRows(ctx, ctx.data.packages.filter((p) => p.is_on_hold && !ctx.world.holds.has(p.id))),
    ctx.query,
    "optional"
  )

/**
 * `GET /packages/v2/inactive`: the packages that left the facility (received by another), as they
 * were then; the world keeps no finished or emptied packages.
 */
export const inactivePackages: Handler = (ctx) =>
  page(ctx, packageRows(ctx, ctx.data.departedPackages), ctx.query, "optional")

/** `GET /packages/v2/{id}/source/harvests`. */
export const packageSourceHarvests: Handler = (ctx) => {
  const found = packageOf(ctx.data, ctx.params.id!)
  if (found === undefined) return notFound()
  const harvests = ctx.world.facilities.flatMap((d) => d.harvests).filter((h) =>
    found.source_harvest_ids.includes(h.id)
  )
  return page(ctx, rows(harvests, Serialize.sourceHarvest), ctx.query)
}

/** `GET /packages/v2/{id}` and `GET /packages/v2/{label}`. */
export const packageByKey: Handler = (ctx) => {
  const found = packageOf(ctx.data, ctx.params.key!)
  return one(found === undefined ? undefined : Serialize.pkg(ctx, found))
}

/** `GET /tags/v2/package/available`: a bare array. */
export const availableTags: Handler = (ctx) =>
  json(
    Writes.availableTags(ctx.world, ctx.data.facility.license_number, 10).map((l, i) =>
      Serialize.availableTag(l, i + 1)
    )
  )

// ------------------------------------------------------------------ plants and harvests

const plantRows = (ctx: Context, filter: (p: Plant.Plant) => boolean) =>
  rows(ctx.data.plants.filter(filter), (p: Plant.Plant) => Serialize.plant(ctx, p))

/** `GET /plants/v2/vegetative`. */
export const vegetativePlants: Handler = (ctx) =>
  page(ctx, plantRows(ctx, (p) => p.growth_phase === "vegetative" && p.harvest_date === null), ctx.query, "optional")

/** `GET /plants/v2/flowering`. */
export const floweringPlants: Handler = (ctx) =>
  page(ctx, plantRows(ctx, (p) => p.growth_phase === "flowering" && p.harvest_date === null), ctx.query, "optional")

/** `GET /plants/v2/inactive`: harvested plants. */
export const inactivePlants: Handler = (ctx) =>
  page(ctx, plantRows(ctx, (p) => p.harvest_date !== null), ctx.query, "optional")

/** `GET /plants/v2/{id}` and `GET /plants/v2/{label}`. */
export const plantByKey: Handler = (ctx) => {
  const key = ctx.params.key!
  const found = ctx.data.plants.find((p) => p.provider_plant_id === key || p.tag === key)
  return one(found === undefined ? undefined : Serialize.plant(ctx, found))
}

/** `GET /harvests/v2/active`: harvests with weight left to package. */
export const activeHarvests: Handler = (ctx) =>
  page(
    ctx,
    rows(ctx.data.harvests.filter((h) => h.current_weight > 0), (h) => Serialize.harvest(ctx, h)),
    ctx.query,
    "optional"
  )

/** `GET /harvests/v2/inactive`: finished harvests (nothing left to package). */
export const inactiveHarvests: Handler = (ctx) =>
  page(
    ctx,
    rows(ctx.data.harvests.filter((h) => h.current_weight <= 0), (h) => Serialize.harvest(ctx, h)),
    ctx.query,
    "optional"
  )

/** `GET /harvests/v2/{id}`. */
export const harvestById: Handler = (ctx) => {
  const found = ctx.data.harvests.find((h) => h.provider_harvest_id === ctx.params.id)
  return one(found === undefined ? undefined : Serialize.harvest(ctx, found))
}

// ------------------------------------------------------------------ lab results

/** `GET /labtests/v2/results?packageId=`: one row per test of each result of the package. */
export const labTestResults: Handler = (ctx) => {
  const id = ctx.query.get("packageId")
  if (id === null) return message(400, "The packageId parameter is required.")
  const found = packageById(ctx.data.packages, id)
  return page(ctx, written(id, found === undefined ? [] : Serialize.labRows(ctx, found)), ctx.query)
}

// ------------------------------------------------------------------ transfers

const transferRows = (ctx: Context, filter: (s: Seen) => boolean) =>
  rows(
    transfersOf(ctx.world, ctx.data).filter(filter).map((seen) => ({ id: seen.transfer.id as string, seen })),
    (row) => Serialize.transferRow(ctx, row.seen)
  )

/** `GET /transfers/v2/incoming`. */
export const incomingTransfers: Handler = (ctx) =>
  page(ctx, transferRows(ctx, (s) => !s.data.template && s.direction === "incoming"), ctx.query, "optional")

/** `GET /transfers/v2/outgoing` (rejected manifests too, as Metrc lists them). */
export const outgoingTransfers: Handler = (ctx) =>
  page(ctx, transferRows(ctx, (s) => !s.data.template && s.direction === "outgoing"), ctx.query, "optional")

/** `GET /transfers/v2/rejected`. */
export const rejectedTransfers: Handler = (ctx) =>
  page(
    ctx,
    transferRows(ctx, (s) => !s.data.template && s.direction === "outgoing" && s.transfer.status === "rejected"),
    ctx.query
  )

/** `GET /transfers/v2/templates/outgoing`. */
export const outgoingTemplates: Handler = (ctx) =>
  page(ctx, transferRows(ctx, (s) => s.data.template && s.direction === "outgoing"), ctx.query)

const seenWhere = (ctx: Context, filter: (s: Seen) => boolean) => transfersOf(ctx.world, ctx.data).find(filter)

const idOfSeen = (s: Seen) => Serialize.numericTransferId(s.transfer.provider_transfer_id)

/** `GET /transfers/v2/deliveries/{id}/packages`. */
export const deliveryPackages: Handler = (ctx) => {
  const id = Number(ctx.params.id)
  const found = seenWhere(ctx, (s) => !s.data.template && Serialize.deliveryIdOf(idOfSeen(s)) === id)
  return page(
    ctx,
    written(ctx.params.id!, found === undefined ? [] : Serialize.deliveryPackages(ctx, found)),
    ctx.query
  )
}

/** `GET /transfers/v2/templates/outgoing/{id}/deliveries`. */
export const templateDeliveries: Handler = (ctx) => {
  const found = seenWhere(ctx, (s) => s.data.template && idOfSeen(s) === Number(ctx.params.id))
  return page(
    ctx,
    written(`${ctx.params.id}:d`, found === undefined ? [] : [Serialize.templateDelivery(ctx, found)]),
    ctx.query
  )
}

/** `GET /transfers/v2/templates/outgoing/deliveries/{id}/packages`. */
export const templateDeliveryPackages: Handler = (ctx) => {
  const id = Number(ctx.params.id)
  const found = seenWhere(ctx, (s) => s.data.template && Serialize.deliveryIdOf(idOfSeen(s)) === id)
  return page(
    ctx,
    written(ctx.params.id!, found === undefined ? [] : Serialize.deliveryPackages(ctx, found)),
    ctx.query
  )
}

// ------------------------------------------------------------------ sales and sales deliveries

/**
 * The receipts of a sales list, narrowed to `salesDateStart`/`salesDateEnd` when given (a span of
 * 24 hours at most, like a lastModified window; either window is required).
 */
const receipts = (ctx: Context, list: ReadonlyArray<Sale.Sale>): Response => {
  const start = ctx.query.get("salesDateStart")
  const end = ctx.query.get("salesDateEnd")
  if (start === null && end === null) {
    return page(ctx, rows(list, (s) => Serialize.sale(ctx, s, false)), ctx.query, "required")
  }
  const s = Date.parse(start ?? "")
  const e = Date.parse(end ?? "")
  if (Number.isNaN(s) || Number.isNaN(e) || e < s) {
    return message(400, "The salesDateStart and salesDateEnd parameters are invalid.")
  }
  if (e - s > 24 * HOUR) {
    return message(400, "The time span between salesDateStart and salesDateEnd may not exceed 24 hours.")
  }
  const sold = list.filter((sale) => {
    const t = Date.parse(sale.sale_date)
    return t >= s && t < e
  })
  const lastModified = ctx.query.has("lastModifiedStart") || ctx.query.has("lastModifiedEnd")
  return page(
    ctx,
    rows(sold, (sale) => Serialize.sale(ctx, sale, false)),
    ctx.query,
    lastModified ? "optional" : "ignored"
  )
}

/** `GET /sales/v2/receipts/active`: rows without their line items; a lastModified or sales-date window is required. */
export const activeReceipts: Handler = (ctx) => receipts(ctx, ctx.data.sales)

/** `GET /sales/v2/receipts/inactive` (voided receipts): the world keeps none. */
export const inactiveReceipts: Handler = (ctx) => receipts(ctx, [])

/** `GET /sales/v2/receipts/{id}`: the receipt with its line items (`Transactions`). */
export const receiptById: Handler = (ctx) => {
  const found = ctx.data.sales.find((s) => s.provider_sale_id === ctx.params.id)
  return one(found === undefined ? undefined : Serialize.sale(ctx, found, true))
}

/** `GET /sales/v2/deliveries/active` (a lastModified window is required). */
export const activeDeliveries: Handler = (ctx) =>
  page(ctx, rows(ctx.data.salesDeliveries, (d) => Serialize.delivery(ctx, d)), ctx.query, "required")

/** `GET /sales/v2/deliveries/{id}`. */
export const deliveryById: Handler = (ctx) => {
  const found = ctx.data.salesDeliveries.find((d) => d.provider_delivery_id === ctx.params.id)
  return one(found === undefined ? undefined : Serialize.delivery(ctx, found))
}

// ------------------------------------------------------------------ catalogue

/** A catalogue list (`GET /{area}/v2/active`) and its by-id read (`GET /{area}/v2/{id}`). */
const catalogue = <A extends { readonly id: string }>(
  kind: Ids.Kind,
  listOf: (data: FacilityData) => ReadonlyArray<A>,
  wire: (ctx: Context, a: A) => unknown,
  windows: Windows
): { readonly active: Handler; readonly byId: Handler } => ({
  active: (ctx) => page(ctx, rows(listOf(ctx.data), (a: A) => wire(ctx, a)), ctx.query, windows),
  byId: (ctx) => {
    const found = listOf(ctx.data).find((a) => Serialize.providerIdOf(kind, a.id) === ctx.params.id)
    return one(found === undefined ? undefined : wire(ctx, found))
  }
})

/** `GET /items/v2/active|{id}`. */
export const items = catalogue("item", (d) => d.items, (ctx, i: Item.Item) => Serialize.item(ctx, i), "optional")

/** `GET /strains/v2/active|{id}`. */
export const strains = catalogue(
  "strain",
  (d) => d.strains,
  (ctx, s: Strain.Strain) => Serialize.strain(ctx, s),
  "optional"
)

/** `GET /locations/v2/active|{id}`. */
export const locations = catalogue(
  "location",
  (d) => d.locations,
  (_, l: Location.Location) => Serialize.location(l),
  "optional"
)

/** `GET /patients/v2/active|{id}` (Metrc documents no lastModified window for patients). */
export const patients = catalogue(
  "patient",
  (d) => d.patients,
  (_, p: Patient.Patient) => Serialize.patient(p),
  "ignored"
)
