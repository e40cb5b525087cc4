/**
 * Lab results: the testing lab tests one bulk package per harvest; one in four fails (pesticides).
 * Each result draws from its own stream; the tested package's lab testing state follows it.
 */
import type { LabResult, Package } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import * as Seed from "../../Seed.js"
import type { Context } from "./context.js"
import { DAY, isoDay, round, scopedOf, touch } from "./context.js"
import type { Cast } from "./facilities.js"
import * as packages from "./packages.js"
import { harvestCount } from "./plants.js"

/** A full compliance panel, drawn in a fixed order; a failing one fails on pesticides. */
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

/** Adds the cultivator's lab results, for the first bulk package of each harvest. */
export const generate = (ctx: Context, { cultivator, lab }: Cast, bulk: ReadonlyArray<Package.Package>): void => {
  const { profile, provider, seed } = ctx
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
      ...scopedOf(ctx, cultivator.facility),
      provider_result_id: providerResultId
    }
    cultivator.labResults.push(result)
    const state = failing ? "TestFailed" : "TestPassed"
    const i = packages.indexOf(cultivator, tested.id)
    if (i >= 0) cultivator.packages[i] = { ...cultivator.packages[i]!, lab_testing_state: state }
    touch(ctx, result.id, testedAt + DAY)
  }
}
