/**
 * What every provider checks of a lab result write before anything is written (issue #30: a lab
 * result keeps what was sent, or is refused naming the field; it is never rewritten):
 *
 * - `overall_passed` is true exactly when every result passed (the state systems derive one from
 *   the other, so a disagreement would be stored as something else);
 * - each `category` is one of core's lab test categories;
 * - `lab_name` and `lab_license`, when sent, are those of the lab that records the result (the
 *   state systems record the recording lab's own name and licence).
 *
 * What each state system's own vocabulary allows (units, values, notes) its adapter checks.
 * Every refusal is `InvalidInput` with `path` the field (400 `invalid_parameter`, `param`).
 */
import { Effect } from "effect"
import type { RecordLabResult } from "../Commands.js"
import type { Facility } from "../Facility.js"
import { categories } from "../LabResult.js"
import { InvalidInput } from "../ProviderError.js"

const OPERATION = "record_lab_result"

const refuse = (path: string, message: string) => Effect.fail(new InvalidInput({ operation: OPERATION, path, message }))

const shown = (value: string) => JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value)

/**
 * Refuses a lab result command that the state system would store as something else; `lab` is the
 * facility that records it.
 */
export const check = (command: RecordLabResult, lab: Facility): Effect.Effect<void, InvalidInput> => {
  const failed = command.results.flatMap((r, i) => (r.passed ? [] : [i]))
  const all = failed.length === 0
  if (command.overall_passed !== all) {
    return refuse(
      "overall_passed",
      all
        ? "overall_passed is false, but every result passed: it is true exactly when every result passed"
        : `overall_passed is true, but results ${failed.join(", ")} failed: it is true exactly when every result passed`
    )
  }
  for (const [i, result] of command.results.entries()) {
    if (!(categories as ReadonlyArray<string>).includes(result.category)) {
      return refuse(
        `results.${i}.category`,
        `results.${i}.category ${shown(result.category)} is not a lab test category: send one of ${
          categories.join(", ")
        }`
      )
    }
  }
  const who = `${lab.name} (licence ${lab.license_number}) records this result`
  if (command.lab_license !== null && command.lab_license !== lab.license_number) {
    return refuse(
      "lab_license",
      `lab_license ${shown(command.lab_license)} is not the lab that records the result: ${who}; send ${
        JSON.stringify(lab.license_number)
      } or leave lab_license out`
    )
  }
  if (command.lab_name !== lab.name) {
    return refuse(
      "lab_name",
      `lab_name ${shown(command.lab_name)} is not the lab that records the result: ${who}, and the state system ` +
        `records its own name; send ${JSON.stringify(lab.name)}`
    )
  }
  return Effect.void
}
