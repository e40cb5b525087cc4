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

const testCategories: ReadonlyArray<readonly [RegExp, (typeof categories)[number], string | null]> = [
  [/terpene|myrcene|limonene|pinene|linalool|caryophyllene/i, "terpenes", "%"],
  [/\b(thc|thca|thcv|cbd|cbda|cbn|cbg|cbga|cbc|delta|potency|cannabinoid)/i, "potency", "%"],
  [/moisture|water activity/i, "moisture", "%"],
  [/foreign|filth|stems|seeds|insect/i, "foreign_matter", "%"],
  [/aflatoxin|ochratoxin|mycotoxin/i, "mycotoxins", "ppb"],
  [
    /microb|coli|salmonella|yeast|mold|mould|aerobic|coliform|aspergillus|listeria|enterobacteria|bile/i,
    "microbials",
    "CFU/g"
  ],
  [/pesticide|abamectin|bifenazate|myclobutanil|imidacloprid|spinosad|pyrethrin/i, "pesticides", "ppm"],
  [/heavy metal|arsenic|cadmium|lead|mercury|chromium/i, "heavy_metals", "ppm"],
  [
    /solvent|butane|propane|ethanol|hexane|acetone|benzene|toluene|xylene|heptane|chloroform/i,
    "residual_solvents",
    "ppm"
  ]
]

/**
 * The category and unit of a lab test from its name, for systems whose test rows carry neither
 * (Metrc's): `THC` → potency, `%`; `Pesticides` → pesticides, `ppm`; a unit in parentheses at the
 * end of the name wins; a name of no known kind is `other`.
 *
 * @since 0.1.0
 * @category utils
 */
export const classifyTest = (testName: string): { readonly category: string; readonly unit: string | null } => {
  const explicit = /\(([^)]+)\)\s*$/.exec(testName)?.[1] ?? null
  for (const [pattern, category, unit] of testCategories) {
    if (pattern.test(testName)) return { category, unit: explicit ?? unit }
  }
  return { category: "other", unit: explicit }
}

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
