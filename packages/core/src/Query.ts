/**
 * The filters of every list (DECISIONS "Paths"), as they arrive in a query string, and pure
 * predicates that apply them to core objects for providers that cannot filter themselves.
 *
 * `updated_since` is on every facility-level list. Core objects carry no modification time,
 * so it is applied by the adapter from the provider's own data (e.g. a last-modified window).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { toEpochMillis } from "./internal/calendar.js"
import type { LabResult } from "./LabResult.js"
import type { Package } from "./Package.js"
import { PageRequest } from "./Page.js"
import type { Plant } from "./Plant.js"
import { GrowthPhase } from "./Plant.js"
import type { Sale } from "./Sale.js"
import type { SalesDelivery } from "./SalesDelivery.js"
import { IsoDateTime } from "./Schemas.js"
import type { Transfer } from "./Transfer.js"
import { TransferDirection, TransferStatus } from "./Transfer.js"

/**
 * `"true"` or `"false"` in a query string, decoded to a boolean.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BooleanString = Schema.transform(Schema.Literal("true", "false"), Schema.Boolean, {
  strict: true,
  decode: (s) => s === "true",
  encode: (b) => (b ? "true" : "false")
}).annotations({ identifier: "BooleanString" })

const updatedSince = {
  updated_since: Schema.optional(IsoDateTime).annotations({
    description: "Only objects changed at or after this ISO 8601 date-time"
  })
}

const FilterText = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))

const dateRange = <A extends { readonly from?: string | undefined; readonly to?: string | undefined }>(q: A) =>
  q.from === undefined || q.to === undefined || toEpochMillis(q.from) <= toEpochMillis(q.to) ||
  { path: ["from"], message: "from must not be after to" }

const dated = {
  ...updatedSince,
  from: Schema.optional(IsoDateTime).annotations({
    description: "Only objects dated at or after this ISO 8601 date-time"
  }),
  to: Schema.optional(IsoDateTime).annotations({
    description: "Only objects dated at or before this ISO 8601 date-time"
  })
}

/** @since 0.1.0 @category schemas */
export const Facilities = Schema.Struct({})
/** @since 0.1.0 @category schemas */
export const Packages = Schema.Struct({
  ...updatedSince,
  is_on_hold: Schema.optional(BooleanString),
  lab_testing_state: Schema.optional(FilterText),
  tag: Schema.optional(FilterText)
})
/** @since 0.1.0 @category schemas */
export const Plants = Schema.Struct({ ...updatedSince, growth_phase: Schema.optional(GrowthPhase) })
/** @since 0.1.0 @category schemas */
export const Harvests = Schema.Struct(updatedSince)
/** @since 0.1.0 @category schemas */
export const LabResults = Schema.Struct({ ...updatedSince, package_id: Schema.optional(FilterText) })
/** @since 0.1.0 @category schemas */
export const Transfers = Schema.Struct({
  ...updatedSince,
  status: Schema.optional(TransferStatus),
  direction: Schema.optional(TransferDirection)
})
/** @since 0.1.0 @category schemas */
export const Sales = Schema.Struct(dated).pipe(Schema.filter(dateRange))
/** @since 0.1.0 @category schemas */
export const SalesDeliveries = Schema.Struct(dated).pipe(Schema.filter(dateRange))
/** @since 0.1.0 @category schemas */
export const Items = Schema.Struct(updatedSince)
/** @since 0.1.0 @category schemas */
export const Strains = Schema.Struct(updatedSince)
/** @since 0.1.0 @category schemas */
export const Locations = Schema.Struct(updatedSince)
/** @since 0.1.0 @category schemas */
export const Patients = Schema.Struct(updatedSince)

/** @since 0.1.0 @category models */
export type Facilities = typeof Facilities.Type
/** @since 0.1.0 @category models */
export type Packages = typeof Packages.Type
/** @since 0.1.0 @category models */
export type Plants = typeof Plants.Type
/** @since 0.1.0 @category models */
export type Harvests = typeof Harvests.Type
/** @since 0.1.0 @category models */
export type LabResults = typeof LabResults.Type
/** @since 0.1.0 @category models */
export type Transfers = typeof Transfers.Type
/** @since 0.1.0 @category models */
export type Sales = typeof Sales.Type
/** @since 0.1.0 @category models */
export type SalesDeliveries = typeof SalesDeliveries.Type
/** @since 0.1.0 @category models */
export type Items = typeof Items.Type
/** @since 0.1.0 @category models */
export type Strains = typeof Strains.Type
/** @since 0.1.0 @category models */
export type Locations = typeof Locations.Type
/** @since 0.1.0 @category models */
export type Patients = typeof Patients.Type

/**
 * A list's whole query string: the page rules plus its filters, e.g. `withPage(Query.Packages)`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const withPage = <F extends Schema.Struct.Fields>(filters: Schema.Struct<F>) =>
  Schema.Struct({ ...PageRequest.fields, ...filters.fields })

const inRange = (date: string | null, q: { readonly from?: string | undefined; readonly to?: string | undefined }) => {
  if (q.from === undefined && q.to === undefined) return true
  if (date === null) return false
  const t = toEpochMillis(date)
  return (q.from === undefined || t >= toEpochMillis(q.from)) && (q.to === undefined || t <= toEpochMillis(q.to))
}

/**
 * Whether a package passes the filters (all but `updated_since`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const matchesPackage = (q: Packages) => (p: Package): boolean =>
  (q.is_on_hold === undefined || p.is_on_hold === q.is_on_hold) &&
  (q.lab_testing_state === undefined || p.lab_testing_state === q.lab_testing_state) &&
  (q.tag === undefined || p.tag === q.tag)

/**
 * Whether a plant passes the filters (all but `updated_since`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const matchesPlant = (q: Plants) => (p: Plant): boolean =>
  q.growth_phase === undefined || p.growth_phase === q.growth_phase

/**
 * Whether a lab result passes the filters (all but `updated_since`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const matchesLabResult = (q: LabResults) => (r: LabResult): boolean =>
  q.package_id === undefined || r.package_id === q.package_id

/**
 * Whether a transfer passes the `status` filter. `direction` is relative to the facility, so
 * the adapter applies it from the provider's incoming and outgoing lists.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matchesTransfer = (q: Transfers) => (t: Transfer): boolean =>
  q.status === undefined || t.status === q.status

/**
 * Whether a sale passes `from` and `to` (on `sale_date`, inclusive).
 *
 * @since 0.1.0
 * @category predicates
 */
export const matchesSale = (q: Sales) => (s: Sale): boolean => inRange(s.sale_date, q)

/**
 * Whether a sales delivery passes `from` and `to` (on `delivery_date`, inclusive; an undated
 * delivery fails a dated filter).
 *
 * @since 0.1.0
 * @category predicates
 */
export const matchesSalesDelivery = (q: SalesDeliveries) => (d: SalesDelivery): boolean => inRange(d.delivery_date, q)

/**
 * The filters of a facility-level list as one predicate over its core objects (all but
 * `updated_since`), for lists answered from stored objects. `license` is the facility's licence
 * number: a transfer is `outgoing` when the facility ships it.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matcher = (
  resource: string,
  query: Readonly<Record<string, unknown>>,
  license: string
): (item: unknown) => boolean => {
  switch (resource) {
    case "packages":
      return matchesPackage(query as Packages) as (item: unknown) => boolean
    case "plants":
      return matchesPlant(query as Plants) as (item: unknown) => boolean
    case "lab_results":
      return matchesLabResult(query as LabResults) as (item: unknown) => boolean
    case "transfers": {
      const q = query as Transfers
      return (item) => {
        const t = item as Transfer
        return matchesTransfer(q)(t) &&
          (q.direction === undefined || (q.direction === "outgoing") === (t.shipper_facility === license))
      }
    }
    case "sales":
      return matchesSale(query as Sales) as (item: unknown) => boolean
    case "sales_deliveries":
      return matchesSalesDelivery(query as SalesDeliveries) as (item: unknown) => boolean
    default:
      return () => true
  }
}
