/**
 * The facilities of a world: a cultivator, a manufacturer, a testing lab, an adult-use dispensary
 * and (where the state has patients) a medical dispensary, each with its licence, type and
 * capability tags. Faker is seeded per facility.
 */
import { faker } from "@faker-js/faker/locale/en"
import type { Facility } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import type * as Profiles from "../../Profile.js"
import * as Seed from "../../Seed.js"
import type { FacilityData, Role } from "../../World.js"
import type { Context } from "./context.js"
import { DAY, isoDay } from "./context.js"

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

/** The capability tags a facility type gives (what the adapters derive from the same flags). */
const capabilityTagsOf = (type: Record<string, boolean>, deliveries: boolean): Array<Facility.CapabilityTag> => {
  const tags: Array<Facility.CapabilityTag> = []
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

const facilityFaker: Profiles.FacilityFaker = {
  streetAddress: () => faker.location.streetAddress(),
  city: () => faker.location.city(),
  zipCode: () => faker.location.zipCode("#####")
}

/** The facilities of the world, by role (`medical` only where the state has patients). */
export interface Cast {
  readonly cultivator: FacilityData
  readonly manufacturer: FacilityData
  readonly lab: FacilityData
  readonly retail: FacilityData
  readonly medical: FacilityData | undefined
}

/** Adds the world's facilities, with nothing in them yet, and returns them by role. */
export const generate = (ctx: Context): Cast => {
  const { capabilities, numericSeed, profile, provider, ref, seed, state, world } = ctx
  const roles: Array<Role> = [
    "cultivation",
    "manufacturing",
    "testing",
    "retail",
    ...(capabilities.patients ? ["medical" as const] : [])
  ]
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
      license_start_date: isoDay(ref - (60 + f * 5) * DAY),
      license_end_date: isoDay(ref + (330 - f * 20) * DAY),
      address: details.address,
      city: details.city,
      zip: details.zip,
      state,
      status: "active",
      credentialed_date: isoDay(ref - 58 * DAY),
      support_activation_date: null,
      support_expiration_date: null,
      provider,
      provider_facility_id: license,
      user_permissions: { is_owner: f === 0, is_manager: true, is_financial_contact: f === 0, occupations: [] },
      capabilities: capabilityTagsOf(type, capabilities.sales_deliveries),
      facility_type: type
    }
    world.facilities.push({
      facility,
      role,
      packages: [],
      departedPackages: [],
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
  return {
    cultivator: byRole("cultivation")!,
    manufacturer: byRole("manufacturing")!,
    lab: byRole("testing")!,
    retail: byRole("retail")!,
    medical: byRole("medical")
  }
}
