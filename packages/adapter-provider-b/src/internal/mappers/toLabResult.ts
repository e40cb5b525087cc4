/**
 * QA sample + its `inventory_qa_check` panels → LabResult (keyed to the source lot, not the sample).
 */
import type { LabResult } from "@tracebridge/core"
import type { QaCheck, QaSample } from "../wire/QaSample.js"
import type { Context } from "./context.js"
import { id, PROVIDER } from "./context.js"
import { isoDate, panelTypes } from "./vocabulary.js"

/**
 * Classic BioTrack reports one pass/fail per sample, not per test. A test passed when the sample
 * passed; when it failed, a panel the facts do not judge (potency, moisture) still passes and a
 * contaminant passed only when it measured exactly 0.
 */
const testPassed = (samplePassed: boolean, judged: boolean, value: number | null): boolean =>
  samplePassed || !judged || value === 0

/** The result rows of a check's panels, in panel order and then key order. */
export const toTestResults = (check: QaCheck): Array<LabResult.LabTestResult> => {
  const passed = check.result === 1
  return check.test.flatMap((panel) => {
    const kind = panelTypes[panel.type] ?? { category: "other", unit: null, judged: true }
    return Object.entries(panel)
      .filter(([key]) => key !== "type")
      .map(([name, raw]) => {
        const value = (raw as number | null | undefined) ?? null
        return {
          name,
          category: kind.category,
          value,
          unit: kind.unit,
          passed: testPassed(passed, kind.judged, value),
          notes: null
        }
      })
  })
}

/** `lab_name`: BioTrack names labs only by licence; the vendor table's name is used when known. */
export const toLabResult = (sample: QaSample, check: QaCheck, ctx: Context, labName?: string): LabResult.LabResult => ({
  id: id("lab_result", sample.inventoryid),
  package_id: id("package", sample.parentid),
  lab_name: labName ?? sample.lab_license,
  lab_license: sample.lab_license,
  test_date: isoDate(sample.sessiontime),
  result_date: null,
  overall_passed: check.result === 1,
  test_type: (check.use ?? sample.sample_use) === 2 ? "ResearchTesting" : "ComplianceTesting",
  results: toTestResults(check),
  facility_id: ctx.facility_id,
  provider: PROVIDER,
  provider_result_id: sample.inventoryid
})
