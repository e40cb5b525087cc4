/**
 * The medical dispensary's patients (three; the third is exempt from sales limits). Each draws
 * from its own stream.
 */
import type { Patient } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import * as Seed from "../../Seed.js"
import type { FacilityData } from "../../World.js"
import type { Context } from "./context.js"
import { DAY, isoDay, scopedOf, touch } from "./context.js"

/** Sets the patients of the medical dispensary. */
export const generate = (ctx: Context, medical: FacilityData): void => {
  const { profile, provider, ref, seed } = ctx
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
      ...scopedOf(ctx, medical.facility),
      provider_patient_id: id
    }
  })
  medical.patients.forEach((patient, i) => touch(ctx, patient.id, ref - (41 - 3 * i) * DAY))
}
