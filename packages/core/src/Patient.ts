/**
 * A registered medical patient (spec §2). Gated by the `patients` capability.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { PatientId } from "./Ids.js"
import { facilityScoped, nullableString, ProviderObjectId } from "./internal/fields.js"
import { FiniteNumber, IsoDate } from "./Schemas.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export const Patient = Schema.Struct({
  id: PatientId,
  patient_license_number: nullableString,
  license_effective_start_date: Schema.NullOr(IsoDate),
  license_effective_end_date: Schema.NullOr(IsoDate),
  recommended_plants_count: Schema.NullOr(FiniteNumber),
  recommended_smokable_quantity: Schema.NullOr(FiniteNumber),
  has_sales_limit_exemption: Schema.Boolean,
  ...facilityScoped,
  provider_patient_id: ProviderObjectId
}).annotations({ identifier: "Patient", description: "A registered medical patient" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Patient extends Schema.Schema.Type<typeof Patient> {}
