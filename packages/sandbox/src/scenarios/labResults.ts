/**
 * The lab result scenario: `lab_result_received`, a result from the world's lab on a package,
 * passing or failing, recorded as a lab write would record it. Fires `lab_result.received`.
 *
 * @since 0.1.0
 */
import { LabResult, ProviderError } from "@tracebridge/core"
import { Either, Schema } from "effect"
import * as Writes from "../Writes.js"
import { define, exhausted, fail, findPackage, fire, iso } from "./common.js"

const panel = (
  failing: boolean
): ReadonlyArray<{ name: string; value: number | null; passed: boolean; notes: string | null }> => [
  { name: "THC", value: 21.3, passed: true, notes: null },
  { name: "CBD", value: 0.4, passed: true, notes: null },
  { name: "Moisture", value: 10.2, passed: true, notes: null },
  {
    name: "Microbiologicals",
    value: failing ? 12_000 : 40,
    passed: !failing,
    notes: failing ? "Total yeast and mold above limit" : null
  },
  {
    name: "Pesticides",
    value: failing ? 0.9 : 0.01,
    passed: !failing,
    notes: failing ? "Myclobutanil above action level" : null
  }
]

/**
 * `lab_result_received`: the package named (or the first untested one off hold) gets a result
 * from the world's lab, passing or failing (`result`), which moves its lab state.
 *
 * @since 0.1.0
 * @category scenarios
 */
export const received = define({
  params: Schema.Struct({
    package_id: Schema.optional(Schema.String),
    result: Schema.optionalWith(Schema.Literal("pass", "fail"), { default: () => "pass" as const })
  }),
  run: (world, params, at) => {
    const failing = params.result === "fail"
    const found = findPackage(
      world,
      params.package_id,
      (p, d) => d.labResults.every((r) => r.package_id !== p.id) && !p.is_on_hold
    )
    if (found === undefined) {
      return params.package_id !== undefined
        ? fail(ProviderError.ResourceNotFound.of("package", params.package_id))
        : exhausted(
          "lab_result_received",
          "untested package off hold",
          "package_id",
          "create packages first (POST …/packages splits a new one off a package)"
        )
    }
    const lab = world.facilities.find((d) => d.role === "testing")
    const result = Writes.recordLabResult(world, {
      license: found.data.facility.license_number,
      tag: found.pkg.tag,
      labName: lab?.facility.name,
      labLicense: lab?.facility.license_number,
      results: panel(failing),
      testDate: iso(at).slice(0, 10),
      at
    })
    if (Either.isLeft(result)) return fail(ProviderError.ResourceNotFound.of("package", found.pkg.id))
    const recorded = result.right
    return Either.right(fire(world, {
      type: "lab_result.received",
      data: {
        id: recorded.id,
        facility_id: found.data.facility.id,
        package_id: found.pkg.id,
        package_tag: found.pkg.tag,
        passed: recorded.overall_passed,
        failed_panel: [...LabResult.failedPanel(recorded)],
        lab_result: recorded
      }
    }))
  }
})
