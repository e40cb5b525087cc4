/**
 * The facility-level resources as one table: for each, its schema, its list filters, the kind of
 * its derived id, the field holding the provider's id, and the capability that gates it. The port,
 * the conformance kit and the HTTP layer all read this table, so a resource is declared once.
 *
 * @since 0.1.0
 */
import type { Schema } from "effect"
import type { Capabilities } from "./Capabilities.js"
import type { CapabilityTag } from "./Facility.js"
import { Harvest } from "./Harvest.js"
import type { Kind } from "./Ids.js"
import { Item as ItemSchema } from "./Item.js"
import { LabResult } from "./LabResult.js"
import { Location } from "./Location.js"
import { Package } from "./Package.js"
import { Patient } from "./Patient.js"
import { Plant } from "./Plant.js"
import * as Query from "./Query.js"
import { Sale } from "./Sale.js"
import { SalesDelivery } from "./SalesDelivery.js"
import { Strain } from "./Strain.js"
import { Transfer } from "./Transfer.js"

/**
 * One row of the table.
 *
 * @since 0.1.0
 * @category models
 */
export interface Definition<A, Q> {
  /** The path segment and port name, e.g. `lab_results`. */
  readonly name: string
  /** The id kind (`Ids.make(kind, …)`). */
  readonly kind: Kind
  readonly schema: Schema.Schema<A, any>
  readonly query: Schema.Schema<Q, any>
  /** e.g. `provider_package_id`. */
  readonly providerIdField: string
  /** Whether a connection with these capabilities may use the resource. */
  readonly enabled: (c: Capabilities) => boolean
  /** The capability named in a `CapabilityNotEnabled`. */
  readonly capability: keyof Capabilities
  /**
   * The facility capability tag a facility's licence needs to have any of the resource (Metrc's
   * FacilityType flags, BioTrack's licence tiers): a licence without it has none, so the managed
   * sync does not read it there. None: every facility may have it.
   */
  readonly facilityTag?: CapabilityTag | undefined
}

const define = <A, Q>(d: Definition<A, Q>): Definition<A, Q> => d

/**
 * Every facility-level resource.
 *
 * @since 0.1.0
 * @category constants
 */
export const resources = {
  packages: define({
    name: "packages",
    kind: "package",
    schema: Package,
    query: Query.Packages,
    providerIdField: "provider_package_id",
    capability: "packages",
    enabled: (c) => c.packages
  }),
  plants: define({
    name: "plants",
    facilityTag: "cultivation",
    kind: "plant",
    schema: Plant,
    query: Query.Plants,
    providerIdField: "provider_plant_id",
    capability: "vegetative",
    enabled: (c) => c.vegetative || c.flowering
  }),
  harvests: define({
    name: "harvests",
    facilityTag: "harvests",
    kind: "harvest",
    schema: Harvest,
    query: Query.Harvests,
    providerIdField: "provider_harvest_id",
    capability: "harvests",
    enabled: (c) => c.harvests
  }),
  lab_results: define({
    name: "lab_results",
    kind: "lab_result",
    schema: LabResult,
    query: Query.LabResults,
    providerIdField: "provider_result_id",
    capability: "labs",
    enabled: (c) => c.labs
  }),
  transfers: define({
    name: "transfers",
    kind: "transfer",
    schema: Transfer,
    query: Query.Transfers,
    providerIdField: "provider_transfer_id",
    capability: "transfers",
    enabled: (c) => c.transfers
  }),
  sales: define({
    name: "sales",
    facilityTag: "sales",
    kind: "sale",
    schema: Sale,
    query: Query.Sales,
    providerIdField: "provider_sale_id",
    capability: "sales",
    enabled: (c) => c.sales
  }),
  sales_deliveries: define({
    name: "sales_deliveries",
    facilityTag: "sales_deliveries",
    kind: "sales_delivery",
    schema: SalesDelivery,
    query: Query.SalesDeliveries,
    providerIdField: "provider_delivery_id",
    capability: "sales_deliveries",
    enabled: (c) => c.sales_deliveries
  }),
  items: define({
    name: "items",
    kind: "item",
    schema: ItemSchema,
    query: Query.Items,
    providerIdField: "provider_item_id",
    capability: "items",
    enabled: (c) => c.items
  }),
  strains: define({
    name: "strains",
    kind: "strain",
    schema: Strain,
    query: Query.Strains,
    providerIdField: "provider_strain_id",
    capability: "strains",
    enabled: (c) => c.strains
  }),
  locations: define({
    name: "locations",
    kind: "location",
    schema: Location,
    query: Query.Locations,
    providerIdField: "provider_location_id",
    capability: "locations",
    enabled: (c) => c.locations
  }),
  patients: define({
    name: "patients",
    facilityTag: "patients",
    kind: "patient",
    schema: Patient,
    query: Query.Patients,
    providerIdField: "provider_patient_id",
    capability: "patients",
    enabled: (c) => c.patients
  })
} as const

/**
 * The table's type.
 *
 * @since 0.1.0
 * @category models
 */
export type Resources = typeof resources

/**
 * A resource name, e.g. `packages`.
 *
 * @since 0.1.0
 * @category models
 */
export type Name = keyof Resources

/**
 * The object type of a resource.
 *
 * @since 0.1.0
 * @category models
 */
export type Item<R extends Name> = Resources[R] extends Definition<infer A, any> ? A : never

/**
 * The decoded filters of a resource.
 *
 * @since 0.1.0
 * @category models
 */
export type Filters<R extends Name> = Resources[R] extends Definition<any, infer Q> ? Q : never

/**
 * Every resource name, in the table's order.
 *
 * @since 0.1.0
 * @category constants
 */
export const names: ReadonlyArray<Name> = Object.keys(resources) as Array<Name>
