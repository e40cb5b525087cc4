/**
 * A package: a tagged quantity of one item (spec §2).
 *
 * No dedicated sample flag exists; a sample is told apart by naming or by `metadata`.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { HarvestId, PackageId } from "./Ids.js"
import { facilityScoped, nullableString, ProviderObjectId } from "./internal/fields.js"
import { LabResult } from "./LabResult.js"
import { FiniteNumber, FreeForm, IsoDate } from "./Schemas.js"

/**
 * The lab testing states Tracebridge reports (the provider_a vocabulary; other providers map onto it).
 *
 * @since 0.1.0
 * @category constants
 */
export const labTestingStates = [
  "NotSubmitted",
  "SubmittedForTesting",
  "TestingInProgress",
  "TestPassed",
  "TestFailed",
  "AwaitingConfirmation",
  "RetestPassed",
  "RetestFailed",
  "Remediated",
  "SelectedForRandomTesting",
  "NotRequired",
  "ProcessValidated"
] as const

/**
 * @since 0.1.0
 * @category schemas
 */
export const Package = Schema.Struct({
  id: PackageId,
  tag: Schema.String.annotations({ description: "Tag number from the state system" }),
  source_tag: nullableString.annotations({ description: "Tag of the source package" }),
  item_name: Schema.String,
  item_category: Schema.String.annotations({ description: "e.g. Flower, Concentrate, Edible" }),
  item_strain: nullableString,
  quantity: FiniteNumber.annotations({ description: "Current quantity" }),
  unit_of_measure: Schema.String.annotations({ description: "e.g. Grams, Each, Ounces" }),
  lab_testing_state: nullableString.annotations({ description: "e.g. TestPassed, NotSubmitted" }),
  is_on_hold: Schema.Boolean.annotations({ description: "Administrative hold" }),
  packaged_date: Schema.NullOr(IsoDate),
  expiration_date: Schema.NullOr(IsoDate),
  ...facilityScoped,
  provider_package_id: ProviderObjectId,
  source_harvest_ids: Schema.Array(HarvestId),
  source_package_ids: Schema.Array(PackageId),
  lab_results: Schema.Array(LabResult),
  metadata: FreeForm.annotations({ description: "Provider-specific, free-form" })
}).annotations({ identifier: "Package", description: "A tagged quantity of one item" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Package extends Schema.Schema.Type<typeof Package> {}
