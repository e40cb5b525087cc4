/**
 * vendor row → Facility.
 */
import type { Facility, ProviderName } from "@tracebridge/core"
import type { Vendor } from "../wire/Vendor.js"
import { id, PROVIDER } from "./context.js"
import { locationTypes } from "./vocabulary.js"

const joinAddress = (a: string | null, b: string | null): string | null => {
  const parts = [a, b].map((s) => s?.trim() ?? "").filter((s) => s.length > 0)
  return parts.length === 0 ? null : parts.join(", ")
}

const blankToNull = (s: string | null): string | null => (s === null || s.trim().length === 0 ? null : s.trim())

/** The connection's state is used when the row's own state is not a US state code. */
export const toFacility = (
  row: Vendor,
  state: ProviderName.UsState,
  isState: (s: string) => boolean
): Facility.Facility => {
  const roles = [row.producer && "producer", row.processor && "processor", row.retail && "retail"].filter(
    (r): r is string => typeof r === "string"
  )
  const typeLabel = row.locationtype === null ? null : locationTypes[row.locationtype] ?? `Type ${row.locationtype}`
  // A lab licence has no producer, processor or retail tier (BioTrack lists labs apart, in qa_lab):
  // only a lab files QA results (the `labs` capability).
  const isLab = row.locationtype === null && !row.producer && !row.processor && !row.retail && !row.medical
  const tags = (when: boolean, ...these: ReadonlyArray<Facility.CapabilityTag>) => when ? these : []
  const capabilities: Array<Facility.CapabilityTag> = [
    ...tags(row.producer, "cultivation", "harvests"),
    ...tags(row.processor, "manufacturing"),
    "packages",
    ...tags(isLab, "labs"),
    "transfers",
    ...tags(row.retail, "sales"),
    ...tags(row.medical, "patients")
  ]
  const rowState = row.state?.trim().toUpperCase() ?? ""
  return {
    id: id("facility", row.location),
    name: row.name,
    display_name: null,
    alias: null,
    license_number: row.location,
    license_type: roles.length > 0 ? roles.join(", ") : typeLabel ?? "licensee",
    license_start_date: null,
    license_end_date: null,
    address: joinAddress(row.address1, row.address2),
    city: blankToNull(row.city),
    zip: blankToNull(row.zip),
    state: (isState(rowState) ? rowState : state) as ProviderName.UsState,
    status: row.deleted ? "inactive" : "active",
    credentialed_date: null,
    support_activation_date: null,
    support_expiration_date: null,
    provider: PROVIDER,
    provider_facility_id: row.location,
    user_permissions: null,
    capabilities,
    facility_type: {
      ubi: row.ubi,
      locationtype: row.locationtype,
      locationtype_name: typeLabel,
      producer: row.producer,
      processor: row.processor,
      retail: row.retail,
      medical: row.medical
    }
  }
}
