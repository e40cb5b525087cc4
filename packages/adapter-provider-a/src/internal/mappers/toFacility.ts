import type { Facility } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { toDate } from "../time.js"
import type { FacilityV2 } from "../wire/Facility.js"
import { PROVIDER, text } from "./context.js"

const flag = (type: Readonly<Record<string, unknown>> | null, key: string): boolean => type?.[key] === true

/** The facility capability tags, from Metrc's FacilityType flags. */
export const capabilityTags = (type: Readonly<Record<string, unknown>> | null): Array<Facility.CapabilityTag> => {
  const tags: Array<Facility.CapabilityTag> = []
  const grows = flag(type, "CanGrowPlants")
  if (grows) tags.push("cultivation")
  if (flag(type, "CanCreateDerivedPackages") || flag(type, "CanInfuseProducts")) tags.push("manufacturing")
  if (flag(type, "CanTestPackages")) tags.push("testing")
  if (grows) tags.push("harvests")
  tags.push("packages")
  const sells = flag(type, "CanSellToConsumers") || flag(type, "CanSellToPatients") || flag(type, "CanSellToCaregivers")
  if (sells) tags.push("sales")
  if (flag(type, "CanDeliverSalesToConsumers") || flag(type, "CanDeliverSalesToPatients")) tags.push("sales_deliveries")
  if (flag(type, "CanTestPackages")) tags.push("labs")
  tags.push("transfers")
  if (flag(type, "IsMedical") && (flag(type, "CanSellToPatients") || flag(type, "CanHaveMemberPatients"))) {
    tags.push("patients")
  }
  return tags
}

/**
 * A facility of `GET /facilities/v2/`. Metrc has no facility id, address or state: the licence
 * number is the key, and the state is the connection's. A licence whose end date has passed
 * (`ctx.today`) is inactive.
 */
export const toFacility = (
  wire: FacilityV2,
  ctx: { readonly state: string; readonly today?: string | undefined }
): Facility.Facility => {
  const end = toDate(wire.License.EndDate)
  return {
    id: Ids.make("facility", PROVIDER, wire.License.Number),
    name: wire.Name,
    display_name: text(wire.DisplayName),
    alias: text(wire.Alias),
    license_number: wire.License.Number,
    license_type: wire.License.LicenseType,
    license_start_date: toDate(wire.License.StartDate),
    license_end_date: end,
    address: null,
    city: null,
    zip: null,
    state: ctx.state.toUpperCase() as Facility.Facility["state"],
    status: end !== null && ctx.today !== undefined && end < ctx.today ? "inactive" : "active",
    credentialed_date: toDate(wire.CredentialedDate),
    support_activation_date: toDate(wire.SupportActivationDate),
    support_expiration_date: toDate(wire.SupportExpirationDate),
    provider: PROVIDER,
    provider_facility_id: wire.License.Number,
    user_permissions: {
      is_owner: wire.IsOwner ?? false,
      is_manager: wire.IsManager ?? false,
      is_financial_contact: wire.IsFinancialContact ?? false,
      occupations: wire.Occupations ?? []
    },
    capabilities: capabilityTags(wire.FacilityType),
    facility_type: wire.FacilityType
  }
}
