/**
 * An in-memory provider driver: the smallest honest implementation of the port, used to test
 * `ProviderPort.make` and the conformance kit. It pages through "provider pages" of 7 items with
 * `Page.fetchWindow`, filters with the `Query` predicates, and keeps writes in its world.
 */
import { Capabilities, Ids, Page, ProviderError, Query, Resource, Session } from "@tracebridge/core"
import type {
  Facility,
  Harvest,
  Item,
  LabResult,
  Location,
  Package,
  Patient,
  Plant,
  ProviderDescriptor,
  ProviderPort,
  Sale,
  SalesDelivery,
  Strain,
  Transfer
} from "@tracebridge/core"
import { Effect, Redacted, Schema } from "effect"

export const PROVIDER = "provider_a" as const
export const GOOD_KEY = "good-key"
export const LICENSE = "MEM-LIC-0001"

/** The licences outside the login the memory provider knows, to ship transfers to. */
export const LICENSEES: ReadonlyArray<string> = ["CO-OTHER-0042", "CO-OTHER-0043"]
export const OTHER_LICENSE = "MEM-LIC-0002"

/** A sandbox session of the good login, and its facility's id. */
export const session = Session.make({
  key: "conn_1",
  provider: PROVIDER,
  state: "CO",
  environment: "sandbox",
  credentials: { user_key: GOOD_KEY }
})
export const facilityId = Ids.make("facility", PROVIDER, LICENSE)

export const descriptor: ProviderDescriptor.ProviderDescriptor = {
  name: PROVIDER,
  displayName: "Memory Provider",
  credentialFields: [{ name: "user_key", label: "User API key", secret: true }],
  loginKey: ["user_key"],
  licenseTypes: ["Cultivation", "Adult-Use Retail"],
  credentials: Schema.Struct({ user_key: Schema.String }),
  baseUrls: {
    CO: { sandbox: "http://memory.invalid/sandbox", production: "http://memory.invalid" },
    MA: { sandbox: "http://memory.invalid/sandbox", production: "http://memory.invalid" }
  },
  providerPageSize: 7,
  rateLimit: { requestsPerSecond: 50, concurrency: 10, retryAfterHeader: true },
  capabilities: {
    CO: Capabilities.make(true, { sales_deliveries: false, patients: false }),
    MA: Capabilities.make(true)
  },
  writes: ["split_package", "record_lab_result", "create_transfer"]
}

export interface World {
  facilities: Array<Facility.Facility>
  packages: Array<Package.Package>
  plants: Array<Plant.Plant>
  harvests: Array<Harvest.Harvest>
  lab_results: Array<LabResult.LabResult>
  transfers: Array<Transfer.Transfer>
  sales: Array<Sale.Sale>
  sales_deliveries: Array<SalesDelivery.SalesDelivery>
  items: Array<Item.Item>
  strains: Array<Strain.Strain>
  locations: Array<Location.Location>
  patients: Array<Patient.Patient>
  counter: number
}

const facilityOf = (license: string, name: string): Facility.Facility => ({
  id: Ids.make("facility", PROVIDER, license),
  name,
  display_name: null,
  alias: null,
  license_number: license,
  license_type: "Cultivation",
  license_start_date: "2025-01-01",
  license_end_date: null,
  address: null,
  city: null,
  zip: null,
  state: "CO",
  status: "active",
  credentialed_date: null,
  support_activation_date: null,
  support_expiration_date: null,
  provider: PROVIDER,
  provider_facility_id: license,
  user_permissions: null,
  capabilities: ["cultivation", "packages"],
  facility_type: null
})

const pad = (n: number) => String(n).padStart(2, "0")

/** A deterministic world: one chain plant → harvest → package → split → lab/transfer/sale, plus filler. */
export const makeWorld = (): World => {
  const facility_id = Ids.make("facility", PROVIDER, LICENSE)
  const scoped = { facility_id, provider: PROVIDER }
  const plants = Array.from({ length: 9 }, (_, i): Plant.Plant => ({
    id: Ids.make("plant", PROVIDER, `PL${i}`),
    tag: `TAGPLANT${pad(i)}`,
    strain_name: "Test Kush",
    growth_phase: (["clone", "vegetative", "flowering"] as const)[i % 3]!,
    plant_batch_id: null,
    location: "Room 1",
    planted_date: `2025-10-${pad(i + 1)}`,
    vegetative_date: null,
    flowering_date: null,
    harvest_date: i < 3 ? "2026-01-10" : null,
    ...scoped,
    provider_plant_id: `PL${i}`
  }))
  const harvests = Array.from({ length: 3 }, (_, i): Harvest.Harvest => ({
    id: Ids.make("harvest", PROVIDER, `H${i}`),
    harvest_name: `Harvest ${i}`,
    harvest_type: "WholePlant",
    strain_name: "Test Kush",
    harvested_date: `2026-01-${pad(10 + i)}`,
    current_weight: 1000 + i,
    unit_of_measure: "Grams",
    total_waste_weight: 50,
    plant_count: i === 0 ? 3 : 0,
    source_plant_ids: i === 0 ? plants.slice(0, 3).map((p) => p.id) : [],
    ...scoped,
    provider_harvest_id: `H${i}`
  }))
  const packages = Array.from({ length: 12 }, (_, i): Package.Package => ({
    id: Ids.make("package", PROVIDER, `P${i}`),
    tag: `TAGPKG${pad(i)}`,
    source_tag: i === 1 ? "TAGPKG00" : null,
    item_name: i % 2 === 0 ? "Test Kush Buds" : "Test Kush Pre-Roll",
    item_category: i % 2 === 0 ? "Flower" : "Pre-Roll",
    item_strain: "Test Kush",
    quantity: 10 * (i + 1),
    unit_of_measure: "Grams",
    lab_testing_state: i % 4 === 0 ? "TestPassed" : "NotSubmitted",
    is_on_hold: i % 5 === 4,
    packaged_date: `2026-01-${pad(15 + i)}`,
    expiration_date: null,
    ...scoped,
    provider_package_id: `P${i}`,
    source_harvest_ids: i === 0 ? [harvests[0]!.id] : [],
    source_package_ids: i === 1 ? [Ids.make("package", PROVIDER, "P0")] : [],
    lab_results: [],
    metadata: { index: i }
  }))
  const lab_results = Array.from({ length: 5 }, (_, i): LabResult.LabResult => ({
    id: Ids.make("lab_result", PROVIDER, `L${i}`),
    package_id: packages[i % 3]!.id,
    lab_name: "Memory Labs",
    lab_license: null,
    test_date: `2026-02-${pad(i + 1)}`,
    result_date: null,
    overall_passed: i !== 2,
    test_type: "ComplianceTesting",
    results: [{ name: "THC", category: "potency", value: 20 + i, unit: "%", passed: true, notes: null }],
    ...scoped,
    provider_result_id: `L${i}`
  }))
  const transfers = Array.from({ length: 4 }, (_, i): Transfer.Transfer => ({
    id: Ids.make("transfer", PROVIDER, `T${i}`),
    manifest_number: `000000000${i}`,
    transfer_type: "Transfer",
    shipper_facility: LICENSE,
    recipient_facility: OTHER_LICENSE,
    packages: [{
      package_id: packages[i === 0 ? 1 : 5]!.id,
      tag: packages[i === 0 ? 1 : 5]!.tag,
      item_name: "Test Kush Pre-Roll",
      quantity: 1,
      unit_of_measure: "Grams"
    }],
    status: (["pending", "in_transit", "received", "rejected"] as const)[i]!,
    estimated_departure: `2026-02-${pad(10 + i)}T09:00:00Z`,
    estimated_arrival: null,
    actual_departure: null,
    actual_arrival: null,
    transporter: null,
    driver_name: null,
    vehicle_info: null,
    ...scoped,
    provider_transfer_id: `T${i}`
  }))
  const sales = Array.from({ length: 6 }, (_, i): Sale.Sale => ({
    id: Ids.make("sale", PROVIDER, `S${i}`),
    receipt_number: `R${i}`,
    sale_date: `2026-03-${pad(i + 1)}T12:00:00Z`,
    customer_type: "Consumer",
    patient_license: null,
    caregiver_license: null,
    items: [{
      package_id: packages[i === 0 ? 1 : 6]!.id,
      tag: packages[i === 0 ? 1 : 6]!.tag,
      item_name: "Test Kush Pre-Roll",
      quantity: 1,
      unit_of_measure: "Grams",
      unit_price: 10,
      discount: 0,
      total: 10
    }],
    total_price: 10,
    total_discount: 0,
    ...scoped,
    provider_sale_id: `S${i}`
  }))
  const sales_deliveries = Array.from({ length: 3 }, (_, i): SalesDelivery.SalesDelivery => ({
    id: Ids.make("sales_delivery", PROVIDER, `D${i}`),
    recipient_name: null,
    recipient_city: null,
    recipient_state: null,
    delivery_date: null,
    customer_type: "Consumer",
    patient_license: null,
    status: null,
    items: [],
    ...scoped,
    provider_delivery_id: `D${i}`
  }))
  const simple = <A>(n: number, f: (i: number) => A) => Array.from({ length: n }, (_, i) => f(i))
  return {
    facilities: [facilityOf(LICENSE, "Memory Cultivation"), facilityOf(OTHER_LICENSE, "Memory Dispensary")],
    packages,
    plants,
    harvests,
    lab_results,
    transfers,
    sales,
    sales_deliveries,
    items: simple(3, (i): Item.Item => ({
      id: Ids.make("item", PROVIDER, `I${i}`),
      name: `Item ${i}`,
      category: "Flower",
      strain: null,
      unit_of_measure: "Grams",
      unit_weight: null,
      ...scoped,
      provider_item_id: `I${i}`
    })),
    strains: simple(3, (i): Strain.Strain => ({
      id: Ids.make("strain", PROVIDER, `ST${i}`),
      name: `Strain ${i}`,
      indica_percentage: 50,
      sativa_percentage: 50,
      genetics: null,
      ...scoped,
      provider_strain_id: `ST${i}`
    })),
    locations: simple(3, (i): Location.Location => ({
      id: Ids.make("location", PROVIDER, `LO${i}`),
      name: `Room ${i}`,
      location_type: null,
      ...scoped,
      provider_location_id: `LO${i}`
    })),
    patients: simple(2, (i): Patient.Patient => ({
      id: Ids.make("patient", PROVIDER, `PT${i}`),
      patient_license_number: null,
      license_effective_start_date: null,
      license_effective_end_date: null,
      recommended_plants_count: null,
      recommended_smokable_quantity: null,
      has_sales_limit_exemption: false,
      ...scoped,
      provider_patient_id: `PT${i}`
    })),
    counter: 0
  }
}

export interface Options {
  readonly world?: World
  /** Errors to fail the next calls with, in order. */
  readonly failures?: Array<ProviderError.ProviderError>
  /** Rewrites every listed item (to build broken drivers). */
  readonly tamper?: (resource: Resource.Name, item: any, index: number) => any
  /** Rewrites every slice total (to build broken drivers). */
  readonly tamperTotal?: (total: number) => number
}

const predicates: Partial<Record<Resource.Name, (q: any) => (x: any) => boolean>> = {
  packages: Query.matchesPackage,
  plants: Query.matchesPlant,
  lab_results: Query.matchesLabResult,
  transfers: Query.matchesTransfer,
  sales: Query.matchesSale,
  sales_deliveries: Query.matchesSalesDelivery
}

export const make = (options: Options = {}): ProviderPort.Driver & { readonly world: World } => {
  const world = options.world ?? makeWorld()
  const failures = options.failures ?? []
  const gate = Effect.suspend(() => {
    const next = failures.shift()
    return next === undefined ? Effect.void : Effect.fail(next)
  })
  const login = (session: { readonly credentials: Redacted.Redacted<Readonly<Record<string, string>>> }) =>
    Redacted.value(session.credentials).user_key === GOOD_KEY
      ? Effect.void
      : Effect.fail(
        new ProviderError.ProviderLoginRequired({
          provider: PROVIDER,
          operation: "login",
          message: "Invalid or no authentication provided.",
          reason: "invalid_credentials"
        })
      )

  const resource = <R extends Resource.Name>(name: R): ProviderPort.ResourceDriver<any, any> => {
    const definition: Resource.Definition<any, any> = Resource.resources[name]
    const rows = (facility: ProviderPort.FacilityRef) =>
      (world[name] as Array<any>).filter((x) => x.facility_id === facility.id)
    return {
      list: (session, facility, query, window) =>
        Effect.gen(function*() {
          yield* gate
          yield* login(session)
          const predicate = predicates[name]?.(query) ?? (() => true)
          const all = rows(facility).filter(predicate)
          const slice = yield* Page.fetchWindow(window, descriptor.providerPageSize!, (page, size) =>
            Effect.succeed({ items: all.slice((page - 1) * size, page * size), total: all.length }))
          return {
            items: options.tamper
              ? slice.items.map((x, i) =>
                options.tamper!(name, x, i)
              )
              : slice.items,
            total: options.tamperTotal ? options.tamperTotal(slice.total) : slice.total
          }
        }),
      get: (session, facility, providerId) =>
        Effect.gen(function*() {
          yield* gate
          yield* login(session)
          const found = rows(facility).find((x) => x[definition.providerIdField] === providerId)
          if (found === undefined) return yield* ProviderError.ResourceNotFound.of(definition.kind, providerId)
          return found
        })
    }
  }

  return {
    world,
    descriptor,
    checkCredentials: (session) => Effect.zipRight(gate, login(session)),
    listFacilities: (session) =>
      Effect.gen(function*() {
        yield* gate
        yield* login(session)
        return world.facilities
      }),
    resources: {
      packages: resource("packages"),
      plants: resource("plants"),
      harvests: resource("harvests"),
      lab_results: resource("lab_results"),
      transfers: resource("transfers"),
      sales: resource("sales"),
      sales_deliveries: resource("sales_deliveries"),
      items: resource("items"),
      strains: resource("strains"),
      locations: resource("locations"),
      patients: resource("patients")
    },
    writes: {
      splitPackage: (session, facility, command) =>
        Effect.gen(function*() {
          yield* login(session)
          const sources = command.source_package_ids.map((id) => world.packages.find((p) => p.id === id))
          const missing = command.source_package_ids.find((_, i) => sources[i] === undefined)
          if (missing !== undefined) return yield* ProviderError.ResourceNotFound.of("package", missing)
          const usable = sources.filter((p) =>
            p !== undefined && !p.is_on_hold && p.unit_of_measure === command.unit_of_measure
          )
          const available = usable.reduce((sum, p) => sum + p!.quantity, 0)
          if (usable.length !== sources.length || available < command.quantity) {
            return yield* new ProviderError.InsufficientQuantity({
              package_id: command.source_package_ids[0]!,
              requested: command.quantity,
              available,
              unit_of_measure: command.unit_of_measure,
              message: `only ${available} ${command.unit_of_measure} available`
            })
          }
          let left = command.quantity
          for (const source of usable) {
            const take = Math.min(left, source!.quantity)
            world.packages = world.packages.map((p) => p.id === source!.id ? { ...p, quantity: p.quantity - take } : p)
            left -= take
          }
          const providerId = `NEW${++world.counter}`
          const created: Package.Package = {
            ...sources[0]!,
            id: Ids.make("package", PROVIDER, providerId),
            tag: `TAGNEW${pad(world.counter)}`,
            source_tag: sources[0]!.tag,
            item_name: command.item_name,
            item_category: command.item_category,
            item_strain: command.item_strain,
            quantity: command.quantity,
            unit_of_measure: command.unit_of_measure,
            facility_id: facility.id,
            provider_package_id: providerId,
            source_package_ids: [...command.source_package_ids],
            lab_results: [],
            metadata: {}
          }
          world.packages.push(created)
          return created
        }),
      recordLabResult: (session, facility, command) =>
        Effect.gen(function*() {
          yield* login(session)
          const providerId = `LNEW${++world.counter}`
          const created: LabResult.LabResult = {
            id: Ids.make("lab_result", PROVIDER, providerId),
            package_id: command.package_id,
            lab_name: command.lab_name,
            lab_license: command.lab_license,
            test_date: command.test_date,
            result_date: null,
            overall_passed: command.overall_passed,
            test_type: command.test_type,
            results: command.results,
            facility_id: facility.id,
            provider: PROVIDER,
            provider_result_id: providerId
          }
          world.lab_results.push(created)
          return created
        }),
      createTransfer: (session, facility, command) =>
        Effect.gen(function*() {
          yield* login(session)
          // as a state system: a transfer goes to a licence it knows
          if (
            !LICENSEES.includes(command.recipient_facility) &&
            !world.facilities.some((f) => f.license_number === command.recipient_facility)
          ) {
            return yield* new ProviderError.InvalidInput({
              operation: "create_transfer",
              path: "recipient_facility",
              message: `no licence ${command.recipient_facility}`
            })
          }
          // the memory provider ships part of a package as asked, and never more than it holds
          for (const line of command.packages) {
            const pkg = world.packages.find((p) => p.id === line.package_id && p.facility_id === facility.id)
            if (pkg === undefined) return yield* ProviderError.ResourceNotFound.of("package", line.package_id)
            // as a state system: a package goes on one transfer at a time
            if (
              world.transfers.some((t) => t.status === "pending" && t.packages.some((p) => p.package_id === pkg.id))
            ) {
              return yield* new ProviderError.ProviderRejected({
                provider: PROVIDER,
                operation: "create_transfer",
                message: `${pkg.tag} is already on a pending transfer`,
                messages: [`${pkg.tag} is already on a pending transfer`]
              })
            }
            if (line.quantity > pkg.quantity) {
              return yield* new ProviderError.InsufficientQuantity({
                package_id: pkg.id,
                requested: line.quantity,
                available: pkg.quantity,
                unit_of_measure: pkg.unit_of_measure,
                message: `${pkg.tag} holds ${pkg.quantity} ${pkg.unit_of_measure}`
              })
            }
          }
          const providerId = `TNEW${++world.counter}`
          const created: Transfer.Transfer = {
            id: Ids.make("transfer", PROVIDER, providerId),
            manifest_number: `9${String(world.counter).padStart(9, "0")}`,
            transfer_type: command.transfer_type,
            shipper_facility: command.shipper_facility,
            recipient_facility: command.recipient_facility,
            packages: command.packages,
            status: "pending",
            estimated_departure: command.estimated_departure,
            estimated_arrival: command.estimated_arrival,
            actual_departure: null,
            actual_arrival: null,
            transporter: command.transporter,
            driver_name: command.driver_name,
            vehicle_info: command.vehicle_info,
            facility_id: facility.id,
            provider: PROVIDER,
            provider_transfer_id: providerId
          }
          world.transfers.push(created)
          return created
        })
    }
  }
}
