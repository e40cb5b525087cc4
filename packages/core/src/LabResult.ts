/**
 * Lab results: one test event on a package, with one row per test (spec §2).
 *
 * `package_id` is the original source package, never the lab sample split off it.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { LabResultId, PackageId } from "./Ids.js"
import { facilityScoped, nullableString, ProviderObjectId } from "./internal/fields.js"
import { FiniteNumber, IsoDate } from "./Schemas.js"

/**
 * The categories Tracebridge uses for test rows. `category` stays a free string on the wire
 * (providers add their own), but adapters map to these where they can.
 *
 * @since 0.1.0
 * @category constants
 */
export const categories = [
  "potency",
  "terpenes",
  "moisture",
  "foreign_matter",
  "microbials",
  "mycotoxins",
  "pesticides",
  "heavy_metals",
  "residual_solvents",
  "contaminants",
  "other"
] as const

/**
 * One test of a lab result.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LabTestResult = Schema.Struct({
  name: Schema.String.annotations({ description: "e.g. THC, CBD, Pesticides" }),
  category: Schema.String.annotations({ description: "e.g. potency, contaminants, microbials" }),
  value: Schema.NullOr(FiniteNumber).annotations({ description: "Null when the test is pass/fail only" }),
  unit: Schema.NullOr(Schema.String).annotations({ description: "e.g. %, ppm, CFU/g" }),
  passed: Schema.Boolean,
  notes: nullableString
}).annotations({ identifier: "LabTestResult" })

/**
 * @since 0.1.0
 * @category models
 */
export interface LabTestResult extends Schema.Schema.Type<typeof LabTestResult> {}

/**
 * @since 0.1.0
 * @category schemas
 */
export const LabResult = Schema.Struct({
  id: LabResultId,
  package_id: PackageId.annotations({ description: "The tested (source) package" }),
  lab_name: Schema.String,
  lab_license: nullableString,
  test_date: Schema.NullOr(IsoDate),
  result_date: Schema.NullOr(IsoDate),
  overall_passed: Schema.Boolean.annotations({ description: "All tests passed" }),
  test_type: Schema.String.annotations({ description: "e.g. ComplianceTesting, ResearchTesting" }),
  results: Schema.Array(LabTestResult),
  ...facilityScoped,
  provider_result_id: ProviderObjectId
}).annotations({ identifier: "LabResult", description: "A lab test event on a package" })

/**
 * @since 0.1.0
 * @category models
 */
export interface LabResult extends Schema.Schema.Type<typeof LabResult> {}

/**
 * The names of the failed tests of a result: the "failed panel" of a `lab_result.received` event.
 *
 * @since 0.1.0
 * @category utils
 */
export const failedPanel = (result: Pick<LabResult, "results">): ReadonlyArray<string> =>
  result.results.filter((r) => !r.passed).map((r) => r.name)
