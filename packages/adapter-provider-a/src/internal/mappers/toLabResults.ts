import { Ids, LabResult } from "@tracebridge/core"
import { toDate } from "../time.js"
import type { LabTestResultRow } from "../wire/LabTest.js"
import type { MapContext } from "./context.js"
import { facilityIdOf, PROVIDER, required, text } from "./context.js"
import { packageId } from "./toPackage.js"

/**
 * The provider id of a Metrc lab result: Metrc's own `LabTestResultId`, whichever package it was
 * read through (a result inherited by packages made from the tested one is one result).
 */
export const labResultProviderId = (row: Pick<LabTestResultRow, "LabTestResultId">) => String(row.LabTestResultId)

/**
 * The rows of `GET /labtests/v2/results?packageId=` (one per test) grouped into lab results,
 * one per `LabTestResultId`, in the order first seen. `package_id` is the package the rows are
 * about (`SourcePackageLabel`, else `packageLabel`).
 */
export const toLabResults = (
  rows: ReadonlyArray<LabTestResultRow>,
  ctx: MapContext & { readonly packageLabel?: string | undefined }
): Array<LabResult.LabResult> => {
  const groups = new Map<number, Array<LabTestResultRow>>()
  for (const row of rows) {
    const group = groups.get(row.LabTestResultId)
    if (group === undefined) groups.set(row.LabTestResultId, [row])
    else group.push(row)
  }
  return [...groups.values()].map((group) => {
    const first = group[0]!
    const label = required(text(first.SourcePackageLabel) ?? ctx.packageLabel, "SourcePackageLabel")
    return {
      id: Ids.make("lab_result", PROVIDER, labResultProviderId(first)),
      package_id: packageId(label),
      lab_name: first.LabFacilityName,
      lab_license: text(first.LabFacilityLicenseNumber),
      test_date: toDate(first.TestPerformedDate),
      result_date: toDate(first.ResultReleaseDateTime),
      overall_passed: first.OverallPassed,
      test_type: "ComplianceTesting",
      results: group.map((row) => {
        const { category, unit } = LabResult.classifyTest(row.TestTypeName)
        return {
          name: row.TestTypeName,
          category,
          value: row.TestResultLevel,
          unit,
          passed: row.TestPassed,
          notes: text(row.TestComment)
        }
      }),
      facility_id: facilityIdOf(ctx),
      provider: PROVIDER,
      provider_result_id: String(first.LabTestResultId)
    }
  })
}
