import type { Item, Location, Patient, Strain } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { toDate } from "../time.js"
import type { ItemV2, LocationV2, PatientV2, StrainV2 } from "../wire/Catalog.js"
import type { MapContext } from "./context.js"
import { facilityIdOf, PROVIDER, text } from "./context.js"

const percentage = (n: number | null) => (n === null || n < 0 || n > 100 ? null : n)

/** An item of `GET /items/v2/…`. */
export const toItem = (wire: ItemV2, ctx: MapContext): Item.Item => ({
  id: Ids.make("item", PROVIDER, String(wire.Id)),
  name: wire.Name,
  category: wire.ProductCategoryName,
  strain: text(wire.StrainName),
  unit_of_measure: wire.UnitOfMeasureName,
  unit_weight: wire.UnitWeight,
  facility_id: facilityIdOf(ctx),
  provider: PROVIDER,
  provider_item_id: String(wire.Id)
})

/** A strain of `GET /strains/v2/…`. */
export const toStrain = (wire: StrainV2, ctx: MapContext): Strain.Strain => ({
  id: Ids.make("strain", PROVIDER, String(wire.Id)),
  name: wire.Name,
  indica_percentage: percentage(wire.IndicaPercentage),
  sativa_percentage: percentage(wire.SativaPercentage),
  genetics: text(wire.Genetics),
  facility_id: facilityIdOf(ctx),
  provider: PROVIDER,
  provider_strain_id: String(wire.Id)
})

/** A location of `GET /locations/v2/…`. */
export const toLocation = (wire: LocationV2, ctx: MapContext): Location.Location => ({
  id: Ids.make("location", PROVIDER, String(wire.Id)),
  name: wire.Name,
  location_type: text(wire.LocationTypeName),
  facility_id: facilityIdOf(ctx),
  provider: PROVIDER,
  provider_location_id: String(wire.Id)
})

/** A patient of `GET /patients/v2/…`. */
export const toPatient = (wire: PatientV2, ctx: MapContext): Patient.Patient => ({
  id: Ids.make("patient", PROVIDER, String(wire.PatientId)),
  patient_license_number: text(wire.LicenseNumber),
  license_effective_start_date: toDate(wire.LicenseEffectiveStartDate),
  license_effective_end_date: toDate(wire.LicenseEffectiveEndDate),
  recommended_plants_count: wire.RecommendedPlants,
  recommended_smokable_quantity: wire.RecommendedSmokableQuantity,
  has_sales_limit_exemption: wire.HasSalesLimitExemption ?? false,
  facility_id: facilityIdOf(ctx),
  provider: PROVIDER,
  provider_patient_id: String(wire.PatientId)
})
