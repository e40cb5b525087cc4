/**
 * Seeded world generation. From a seed, a login, a provider and state, and a reference date, it
 * builds a licensed operation: a cultivator, a manufacturer, a testing lab, an adult-use
 * dispensary and (where the state has patients) a medical dispensary, with strains, items,
 * locations, plants, harvests, packages split from packages, lab results, transfers in every
 * status, sales and sales deliveries. Chain of custody holds, and quantities add up.
 *
 * Determinism: every entity draws from its own stream (`Seed.prng`, and faker seeded per entity
 * for names), so that adding a kind of entity shifts no other; the only time is the reference
 * date passed in.
 *
 * @since 0.1.0
 */
import { faker } from "@faker-js/faker/locale/en"
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
  ProviderName,
  Sale,
  Strain
} from "@tracebridge/core"
import { Capabilities, Ids } from "@tracebridge/core"
import type { Profile } from "./Profile.js"
import * as Profiles from "./Profile.js"
import * as Seed from "./Seed.js"
import type { FacilityData, Role, TransferData, World } from "./World.js"

/**
 * How big a world is.
 *
 * @since 0.1.0
 * @category models
 */
export type Size = "small" | "large" | { readonly packages: number }

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly provider: ProviderName.ProviderName
  /** The provider's descriptor (its capabilities per state shape the world). */
  readonly descriptor: ProviderDescriptor.ProviderDescriptor
  /** How the provider's identifiers and details look. */
  readonly profile: Profile
  readonly state: ProviderName.UsState
  readonly seed: string
  readonly login: string
  /** ISO 8601; every generated date is at or before it. */
  readonly referenceDate: string
  readonly size?: Size
}

const DAY = 86_400_000
const HOUR = 3_600_000
/**
 * A formatter remembered by its argument: a large world has many packages but few distinct
 * instants (packages share days and hours), so each string is built once.
 */
const memo = (format: (ms: number) => string) => {
  const seen = new Map<number, string>()
  return (ms: number): string => {
    let text = seen.get(ms)
    if (text === undefined) {
      if (seen.size > 10_000) seen.clear()
      text = format(ms)
      seen.set(ms, text)
    }
    return text
  }
}
const isoDay = memo((ms: number) => new Date(ms).toISOString().slice(0, 10))
/** Whole seconds: what every provider can carry. */
const isoTime = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString()
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits

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

const panel = (pick: () => number, failing: boolean): Array<LabResult.LabTestResult> => [
  { name: "THC", category: "potency", value: round(15 + pick() * 12), unit: "%", passed: true, notes: null },
  { name: "CBD", category: "potency", value: round(pick() * 2), unit: "%", passed: true, notes: null },
  { name: "Moisture", category: "moisture", value: round(8 + pick() * 4), unit: "%", passed: true, notes: null },
  {
    name: "Microbiologicals",
    category: "microbials",
    value: round(pick() * 100),
    unit: "CFU/g",
    passed: true,
    notes: null
  },
  {
    name: "Pesticides",
    category: "pesticides",
    value: failing ? round(0.5 + pick()) : round(pick() * 0.05, 3),
    unit: "ppm",
    passed: !failing,
    notes: failing ? "Myclobutanil above action level" : null
  },
  {
    name: "Heavy Metals",
    category: "heavy_metals",
    value: round(pick() * 0.1, 3),
    unit: "ppm",
    passed: true,
    notes: null
  }
]

const facilityTypes: Record<Role, Record<string, boolean>> = {
  cultivation: {
    IsMedical: false,
    IsRetail: false,
    CanGrowPlants: true,
    CanCreateDerivedPackages: true,
    CanTestPackages: false,
    CanSellToConsumers: false
  },
  manufacturing: {
    IsMedical: false,
    IsRetail: false,
    CanGrowPlants: false,
    CanCreateDerivedPackages: true,
    CanInfuseProducts: true,
    CanTestPackages: false
  },
  testing: {
    IsMedical: false,
    IsRetail: false,
    CanGrowPlants: false,
    CanTestPackages: true,
    TestsRequireLabSample: true
  },
  retail: { IsMedical: false, IsRetail: true, CanSellToConsumers: true, CanDeliverSalesToConsumers: true },
  medical: {
    IsMedical: true,
    IsRetail: true,
    CanSellToPatients: true,
    CanSellToCaregivers: true,
    CanHaveMemberPatients: true
  }
}

const licenseTypes: Record<Role, string> = {
  cultivation: "Cultivation",
  manufacturing: "Manufacturing",
  testing: "Testing Laboratory",
  retail: "Adult-Use Retail",
  medical: "Medical Retail"
}

/** The capability tags provider_a derives from a facility type (kept in step with its adapter). */
const metrcCapabilityTags = (type: Record<string, boolean>, deliveries: boolean): Array<string> => {
  const tags: Array<string> = []
  if (type.CanGrowPlants) tags.push("cultivation")
  if (type.CanCreateDerivedPackages || type.CanInfuseProducts) tags.push("manufacturing")
  if (type.CanTestPackages) tags.push("testing")
  if (type.CanGrowPlants) tags.push("harvests")
  tags.push("packages")
  if (type.CanSellToConsumers || type.CanSellToPatients || type.CanSellToCaregivers) tags.push("sales")
  if (deliveries && (type.CanDeliverSalesToConsumers || type.CanDeliverSalesToPatients)) tags.push("sales_deliveries")
  if (type.CanTestPackages) tags.push("labs")
  tags.push("transfers")
  if (type.IsMedical && (type.CanSellToPatients || type.CanHaveMemberPatients)) tags.push("patients")
  return tags
}

const packagesPerFacility = (size: Size | undefined) =>
  size === undefined || size === "small" ? 40 : size === "large" ? 2_000 : size.packages

/**
 * Generates the world of a login.
 *
 * @since 0.1.0
 * @category constructors
 */
export const generate = (options: Options): World => {
  const { provider, state, seed: seedText, login } = options
  // A login may carry "~<key>" (a connection id behind /v1): same world, kept apart.
  const seed = `${seedText}|${provider}|${state}|${login.split("~")[0]}`
  const profile = options.profile
  const ref = Date.parse(options.referenceDate)
  const numericSeed = Seed.integer(seed, "world", 0)
  const capabilities = options.descriptor.capabilities[state] ?? Capabilities.make(true)
  const roles: Array<Role> = [
    "cultivation",
    "manufacturing",
    "testing",
    "retail",
    ...(capabilities.patients ? ["medical" as const] : [])
  ]
  const world: World = {
    provider,
    state,
    seed: seedText,
    login,
    referenceDate: new Date(ref).toISOString(),
    facilities: [],
    transfers: [],
    modified: new Map(),
    counters: { next: 1 },
    original: new Map(),
    draws: [],
    [Profiles.key]: profile
  }
  const touch = (id: string, at: number) => world.modified.set(id, Math.floor(at / 1000) * 1000)
  const scopedOf = (facility: Facility.Facility) => ({ facility_id: facility.id, provider })

  const facilityFaker: Profiles.FacilityFaker = {
    streetAddress: () => faker.location.streetAddress(),
    city: () => faker.location.city(),
    zipCode: () => faker.location.zipCode("#####")
  }

  // ------------------------------------------------------------------ facilities
  for (const [f, role] of roles.entries()) {
    faker.seed(Seed.integer(seed, "facility", f))
    const license = profile.license(f, numericSeed)
    const company = faker.company.name().replace(/[,]/g, "")
    const type = facilityTypes[role]
    const details = profile.facilityDetails(company, role, facilityFaker)
    const facility: Facility.Facility = {
      id: Ids.make("facility", provider, license),
      name: `${company} ${licenseTypes[role]}`,
      display_name: details.display_name,
      alias: details.alias,
      license_number: license,
      license_type: licenseTypes[role],
      license_start_date: isoDay(ref - (400 + f * 30) * DAY),
      license_end_date: isoDay(ref + (330 - f * 20) * DAY),
      address: details.address,
      city: details.city,
      zip: details.zip,
      state,
      status: "active",
      credentialed_date: isoDay(ref - 380 * DAY),
      support_activation_date: null,
      support_expiration_date: null,
      provider,
      provider_facility_id: license,
      user_permissions: { is_owner: f === 0, is_manager: true, is_financial_contact: f === 0, occupations: [] },
      capabilities: metrcCapabilityTags(type, capabilities.sales_deliveries),
      facility_type: type
    }
    world.facilities.push({
      facility,
      role,
      packages: [],
      plants: [],
      harvests: [],
      labResults: [],
      sales: [],
      salesDeliveries: [],
      items: [],
      strains: [],
      locations: [],
      patients: []
    })
  }
  const byRole = (role: Role) => world.facilities.find((d) => d.role === role)
  const cultivator = byRole("cultivation")!
  const manufacturer = byRole("manufacturing")!
  const lab = byRole("testing")!
  const retail = byRole("retail")!
  const medical = byRole("medical")

  // ------------------------------------------------------------------ catalogue per facility
  for (const [f, data] of world.facilities.entries()) {
    const scoped = scopedOf(data.facility)
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
    const itemDefs: Array<[string, string, string, number | null]> = [
      ["Buds", "Flower", "Grams", null],
      ["Shake", "Shake/Trim", "Grams", null],
      ["Pre-Roll 1g", "Pre-Roll", "Grams", null],
      ["Live Resin", "Concentrate", "Grams", null]
    ]
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
  }

  // ------------------------------------------------------------------ plants and harvests
  const plantAt = (n: number, phase: "vegetative" | "flowering", harvested: number | null): Plant.Plant => {
    const pick = Seed.prng(seed, "plant", n)
    const tag = profile.tag("plant", 0, n)
    const strain = cultivator.strains[Math.floor(pick() * 2)]!.name
    const planted = ref - (60 + Math.floor(pick() * 60)) * DAY
    const ids = profile.plantIds(tag, n)
    return {
      id: Ids.make("plant", provider, tag),
      tag,
      strain_name: strain,
      growth_phase: phase,
      plant_batch_id: ids.plantBatchId,
      location: "Flower Room",
      planted_date: isoDay(planted),
      vegetative_date: isoDay(planted + 14 * DAY),
      flowering_date: phase === "flowering" ? isoDay(planted + 45 * DAY) : null,
      harvest_date: harvested === null ? null : isoDay(harvested),
      ...scopedOf(cultivator.facility),
      provider_plant_id: ids.providerId
    }
  }
  let plantNo = 0
  for (let i = 0; i < 8; i++) {
    const p = plantAt(++plantNo, "vegetative", null)
    cultivator.plants.push(p)
    touch(p.id, ref - (10 + i) * HOUR)
  }
  for (let i = 0; i < 8; i++) {
    const p = plantAt(++plantNo, "flowering", null)
    cultivator.plants.push(p)
    touch(p.id, ref - (20 + i) * HOUR)
  }
  const harvestCount = 4
  for (let h = 0; h < harvestCount; h++) {
    const pick = Seed.prng(seed, "harvest", h)
    const harvestedAt = ref - (30 - h * 5) * DAY
    const cut = Array.from({ length: 3 }, () => plantAt(++plantNo, "flowering", harvestedAt))
    cultivator.plants.push(...cut)
    for (const p of cut) touch(p.id, harvestedAt)
    const providerId = String(profile.numeric("harvest", 0, h + 1))
    const strain = cut[0]!.strain_name
    const harvest: Harvest.Harvest = {
      id: Ids.make("harvest", provider, providerId),
      harvest_name: `${isoDay(harvestedAt)}-${strain}-${h + 1}`,
      harvest_type: h % 3 === 2 ? "Manicure" : "WholePlant",
      strain_name: strain,
      harvested_date: isoDay(harvestedAt),
      current_weight: round(200 + pick() * 300),
      unit_of_measure: "Grams",
      total_waste_weight: round(50 + pick() * 50),
      plant_count: cut.length,
      source_plant_ids: cut.map((p) => p.id),
      ...scopedOf(cultivator.facility),
      provider_harvest_id: providerId
    }
    cultivator.harvests.push(harvest)
    touch(harvest.id, harvestedAt + DAY)
  }

  // ------------------------------------------------------------------ packages
  const makePackage = (
    data: FacilityData,
    n: number,
    options: {
      readonly item: Item.Item
      readonly quantity: number
      readonly packagedAt: number
      readonly harvests: ReadonlyArray<Harvest.Harvest>
      readonly sources: ReadonlyArray<Package.Package>
      readonly onHold?: boolean
    }
  ): Package.Package => {
    const f = world.facilities.indexOf(data)
    const tag = profile.tag("package", f, n)
    const numericId = profile.numeric("package", f, n)
    const providerId = profile.packageId(tag, numericId)
    const metadata = profile.packageMetadata({
      quantity: options.quantity,
      unitAbbreviation: "g",
      sourceHarvestNames: options.harvests.map((h) => h.harvest_name),
      at: options.packagedAt,
      providerItemId: options.item.provider_item_id
    })
    const pkg: Package.Package = {
      id: Ids.make("package", provider, tag),
      tag,
      source_tag: options.sources[0]?.tag ?? null,
      item_name: options.item.name,
      item_category: options.item.category,
      item_strain: options.item.strain,
      quantity: options.quantity,
      unit_of_measure: options.item.unit_of_measure,
      lab_testing_state: "NotSubmitted",
      is_on_hold: options.onHold ?? false,
      packaged_date: isoDay(options.packagedAt),
      expiration_date: null,
      facility_id: data.facility.id,
      provider,
      provider_package_id: providerId,
      source_harvest_ids: options.harvests.map((h) => h.id),
      source_package_ids: options.sources.map((s) => s.id),
      lab_results: [],
      metadata
    }
    data.packages.push(pkg)
    world.original.set(pkg.id, options.quantity)
    touch(pkg.id, options.packagedAt)
    return pkg
  }
  // Packages are replaced in place (by index, one scan that stops at the package), not by mapping
  // or filtering the whole list: a facility may hold 100,000 of them.
  const indexOfPackage = (data: FacilityData, id: string) => data.packages.findIndex((p) => p.id === id)
  const setQuantity = (data: FacilityData, id: string, quantity: number, at: number) => {
    const i = indexOfPackage(data, id)
    if (i >= 0) {
      const p = data.packages[i]!
      data.packages[i] = {
        ...p,
        quantity: round(quantity, 4),
        metadata: profile.touchMetadata(p.metadata, at)
      }
    }
    touch(id, at)
  }
  const draw = (data: FacilityData, source: Package.Package, target: Package.Package, quantity: number, at: number) => {
    const current = data.packages[indexOfPackage(data, source.id)]!
    setQuantity(data, source.id, current.quantity - quantity, at)
    world.draws.push({ source: source.id, target: target.id, quantity })
  }

  const bulk: Array<Package.Package> = []
  let packageNo = 0
  const perFacility = packagesPerFacility(options.size)
  const bulkCount = Math.max(harvestCount, perFacility - 12)
  // Per harvest, once: its flower item, its day and the one-element list of its harvests.
  const bulkOf = cultivator.harvests.map((harvest) => ({
    harvest,
    item: cultivator.items.find((it) => it.strain === harvest.strain_name && it.category === "Flower") ??
      cultivator.items[0]!,
    day: Date.parse(`${harvest.harvested_date}T00:00:00Z`),
    harvests: [harvest]
  }))
  for (let i = 0; i < bulkCount; i++) {
    const { day, harvests, item } = bulkOf[i % harvestCount]!
    const pick = Seed.prng(seed, "package", i)
    const packagedAt = day + (2 + (i % 5)) * DAY + Math.floor(pick() * 8) * HOUR
    bulk.push(makePackage(cultivator, ++packageNo, {
      item,
      quantity: round(100 + pick() * 400, 2),
      packagedAt: Math.min(packagedAt, ref - HOUR),
      harvests,
      sources: [],
      onHold: i % 23 === 22
    }))
  }

  // Lab results: the testing lab tests one package per harvest; one in four fails.
  for (let h = 0; h < harvestCount; h++) {
    const tested = bulk[h]!
    const pick = Seed.prng(seed, "lab", h)
    const failing = h % 4 === 3
    const resultNo = profile.numeric("lab", 0, h + 1)
    const { providerId, providerResultId } = profile.labResultIds(tested, resultNo, h + 1)
    const testedAt = Date.parse(`${tested.packaged_date}T00:00:00Z`) + 2 * DAY
    const result: LabResult.LabResult = {
      id: Ids.make("lab_result", provider, providerId),
      package_id: tested.id,
      lab_name: lab.facility.name,
      lab_license: lab.facility.license_number,
      test_date: isoDay(testedAt),
      result_date: isoDay(testedAt + DAY),
      overall_passed: !failing,
      test_type: "ComplianceTesting",
      results: panel(pick, failing),
      ...scopedOf(cultivator.facility),
      provider_result_id: providerResultId
    }
    cultivator.labResults.push(result)
    const state = failing ? "TestFailed" : "TestPassed"
    const i = indexOfPackage(cultivator, tested.id)
    if (i >= 0) cultivator.packages[i] = { ...cultivator.packages[i]!, lab_testing_state: state }
    touch(result.id, testedAt + DAY)
  }

  // Splits: pre-rolls split off the first bulk packages, inheriting their harvests.
  const splits: Array<Package.Package> = []
  for (let i = 0; i < 6; i++) {
    const source = bulk[i % harvestCount]!
    const pick = Seed.prng(seed, "split", i)
    const item = cultivator.items.find((it) => it.strain === source.item_strain && it.category === "Pre-Roll") ??
      cultivator.items[2]!
    const quantity = round(10 + pick() * 20, 2)
    const at = Date.parse(`${source.packaged_date}T00:00:00Z`) + 3 * DAY
    const child = makePackage(cultivator, ++packageNo, {
      item,
      quantity,
      packagedAt: Math.min(at, ref - 2 * HOUR),
      harvests: cultivator.harvests.filter((h) => source.source_harvest_ids.includes(h.id)),
      sources: [source]
    })
    draw(cultivator, source, child, quantity, Math.min(at, ref - 2 * HOUR))
    splits.push(child)
  }

  // ------------------------------------------------------------------ transfers
  const move = (from: FacilityData, to: FacilityData, pkg: Package.Package) => {
    const i = indexOfPackage(from, pkg.id)
    const current = from.packages[i]!
    if (i >= 0) from.packages.splice(i, 1)
    to.packages.push({ ...current, facility_id: to.facility.id })
    const results = from.labResults.filter((r) => r.package_id === pkg.id)
    from.labResults = from.labResults.filter((r) => r.package_id !== pkg.id)
    to.labResults.push(...results.map((r) => ({ ...r, facility_id: to.facility.id })))
  }
  const transfer = (
    n: number,
    from: FacilityData | string,
    to: FacilityData,
    packages: ReadonlyArray<Package.Package>,
    status: "pending" | "in_transit" | "received" | "rejected",
    departAt: number
  ) => {
    faker.seed(Seed.integer(seed, "transfer", n))
    const { manifest, providerId } = profile.transferIds(n, profile.numeric("transfer", 0, n), false)
    const shipper = typeof from === "string" ? from : from.facility.license_number
    const departed = status !== "pending"
    const stored: TransferData = {
      template: false,
      transfer: {
        id: Ids.make("transfer", provider, providerId),
        manifest_number: manifest,
        transfer_type: "Transfer",
        shipper_facility: shipper,
        recipient_facility: to.facility.license_number,
        packages: packages.map((p) => ({
          package_id: p.id,
          tag: p.tag,
          item_name: p.item_name,
          quantity: p.quantity,
          unit_of_measure: p.unit_of_measure
        })),
        status,
        estimated_departure: isoTime(departAt),
        estimated_arrival: isoTime(departAt + 4 * HOUR),
        actual_departure: departed ? isoTime(departAt + 10 * 60_000) : null,
        actual_arrival: status === "received" || status === "rejected" ? isoTime(departAt + 4 * HOUR) : null,
        transporter: null,
        driver_name: faker.person.fullName(),
        vehicle_info: `${faker.vehicle.manufacturer()} ${faker.vehicle.model()} ${faker.vehicle.vrm()}`,
        provider,
        provider_transfer_id: providerId
      }
    }
    world.transfers.push(stored)
    touch(stored.transfer.id, departAt + (departed ? 4 * HOUR : 0))
    if (status === "received" && typeof from !== "string") { for (const p of packages) move(from, to, p) }
  }
  transfer(1, cultivator, manufacturer, [bulk[4]!, bulk[5]!], "received", ref - 12 * DAY)
  transfer(2, cultivator, retail, [splits[0]!, splits[1]!, splits[2]!], "received", ref - 10 * DAY)
  if (medical) transfer(3, cultivator, medical, [splits[3]!, splits[4]!], "received", ref - 9 * DAY)
  transfer(4, cultivator, retail, [bulk[6]!], "in_transit", ref - 2 * HOUR - 30 * 60_000)
  transfer(5, cultivator, lab, [bulk[7]!], "pending", ref + DAY)
  transfer(6, cultivator, retail, [splits[5]!], "rejected", ref - 5 * DAY)
  transfer(7, profile.license(8, numericSeed), retail, [], "pending", ref + 2 * DAY)

  // Manufacturing: concentrate made from the flower it received.
  for (const [i, source] of manufacturer.packages.slice(0, 2).entries()) {
    const item = manufacturer.items.find((it) => it.category === "Concentrate") ?? manufacturer.items[3]!
    const at = ref - (8 - i) * DAY
    const input = round(source.quantity / 2, 2)
    const child = makePackage(manufacturer, 1000 + i, {
      item,
      quantity: round(input * 0.2, 2),
      packagedAt: at,
      harvests: cultivator.harvests.filter((h) => source.source_harvest_ids.includes(h.id)),
      sources: [source]
    })
    draw(manufacturer, source, child, input, at)
  }

  // ------------------------------------------------------------------ sales, deliveries, patients
  if (medical) {
    medical.patients = [0, 1, 2].map((i): Patient.Patient => {
      const pick = Seed.prng(seed, "patient", i)
      const id = String(profile.numeric("patient", 4, i + 1))
      return {
        id: Ids.make("patient", provider, id),
        patient_license_number: `SBX-PT-${String(Math.floor(pick() * 1e6)).padStart(6, "0")}`,
        license_effective_start_date: isoDay(ref - 200 * DAY),
        license_effective_end_date: isoDay(ref + 165 * DAY),
        recommended_plants_count: 6,
        recommended_smokable_quantity: 56,
        has_sales_limit_exemption: i === 2,
        ...scopedOf(medical.facility),
        provider_patient_id: id
      }
    })
  }
  const sell = (data: FacilityData, count: number, patients: ReadonlyArray<Patient.Patient>) => {
    const f = world.facilities.indexOf(data)
    for (let i = 0; i < count; i++) {
      const stock = data.packages.filter((p) => p.quantity >= 2 && !p.is_on_hold)
      if (stock.length === 0) return
      const pick = Seed.prng(seed, `sale:${f}`, i)
      const pkg = stock[Math.floor(pick() * stock.length)]!
      const quantity = 1 + Math.floor(pick() * 2)
      const unitPrice = round(8 + pick() * 7)
      // A read model without discounts (provider_a's) gets worlds without them.
      const discount = profile.discounts && i % 4 === 3 ? 1 : 0
      const at = ref - (7 - (i % 7)) * DAY + (10 + (i % 8)) * HOUR
      const providerId = String(profile.numeric("sale", f, i + 1))
      const patient = patients.length > 0 ? patients[i % patients.length]! : null
      const sale: Sale.Sale = {
        id: Ids.make("sale", provider, providerId),
        receipt_number: `R-${providerId}`,
        sale_date: isoTime(Math.min(at, ref - HOUR)),
        customer_type: patient === null ? "Consumer" : "Patient",
        patient_license: patient?.patient_license_number ?? null,
        caregiver_license: null,
        items: [{
          package_id: pkg.id,
          tag: pkg.tag,
          item_name: pkg.item_name,
          quantity,
          unit_of_measure: pkg.unit_of_measure,
          unit_price: unitPrice,
          discount,
          total: round(quantity * unitPrice - discount)
        }],
        total_price: round(quantity * unitPrice),
        total_discount: discount,
        ...scopedOf(data.facility),
        provider_sale_id: providerId
      }
      data.sales.push(sale)
      setQuantity(data, pkg.id, pkg.quantity - quantity, Math.min(at, ref - HOUR))
      touch(sale.id, Math.min(at, ref - HOUR))
    }
  }
  sell(retail, 12, [])
  if (medical) sell(medical, 6, medical.patients)
  if (capabilities.sales_deliveries) {
    retail.salesDeliveries = retail.sales.slice(0, 4).map((sale, i) => {
      faker.seed(Seed.integer(seed, "delivery", i))
      const providerId = String(profile.numeric("delivery", 3, i + 1))
      const delivered = Date.parse(sale.sale_date) + 2 * HOUR
      const d = {
        id: Ids.make("sales_delivery", provider, providerId),
        recipient_name: faker.person.fullName(),
        recipient_city: faker.location.city(),
        recipient_state: state,
        delivery_date: isoTime(Math.min(delivered, ref)),
        customer_type: sale.customer_type,
        patient_license: sale.patient_license,
        status: i === 0 ? "InProgress" : "Completed",
        items: sale.items.map((it) => ({
          package_id: it.package_id,
          item_name: it.item_name,
          unit_of_measure: it.unit_of_measure,
          quantity: it.quantity
        })),
        ...scopedOf(retail.facility),
        provider_delivery_id: providerId
      }
      touch(d.id, Math.min(delivered, ref))
      return d
    })
  }
  world.counters.next = 900_000
  return world
}
