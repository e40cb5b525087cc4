import type { ProviderPort, Query, Session } from "@tracebridge/core"
import { Ids, ProviderError } from "@tracebridge/core"
import { Effect, Option } from "effect"
import type { Enricher } from "../enrich.js"
import { untested } from "../enrich.js"
import { labState, PROVIDER, text } from "../mappers/context.js"
import { labResultProviderId, toLabResults } from "../mappers/toLabResults.js"
import { readAll } from "../paging.js"
import type { FacilityRef, Reader } from "../reader.js"
import { map, PAGE } from "../reader.js"
import type { PackageV2 } from "../wire/Package.js"
import { PackageV2 as PackageWire } from "../wire/Package.js"

/**
 * Lab results: Metrc reads them per package only (`/labtests/v2/results?packageId=`), so a list
 * reads them for one package, or for every tested package, active or finished (`/inactive`), each
 * result once (a result is inherited by the packages made from the tested one). A result's id is
 * Metrc's `LabTestResultId`.
 */
export const labResults = (
  { ctxOf, getOne, windowed }: Reader,
  { labResultsOfPackage, labRows, packageByLabel, resultPackages }: Enricher
): ProviderPort.ResourceDriver<any, Query.LabResults> => {
  /** Every result of the facility's tested packages, once each, oldest package change first. */
  const everyResult = (session: Session.Session, facility: FacilityRef, since: string | undefined) =>
    Effect.gen(function*() {
      const sources = yield* windowed(
        session,
        facility,
        ["/packages/v2/active", "/packages/v2/inactive"],
        PackageWire,
        "lab_results.list",
        since
      )
      const tested = (yield* readAll(sources, PAGE)).filter((p) => {
        const state = labState(p.LabTestingState)
        return state !== null && !untested.has(state)
      })
      const read = (yield* Effect.forEach(tested, (p) => labResultsOfPackage(session, facility, p), {
        concurrency: 8
      })).flat()
      const seen = new Set<string>()
      return read.filter((r) => !seen.has(r.id) && seen.add(r.id) !== undefined)
    })

  return {
    list: (session, facility, q, window) =>
      Effect.gen(function*() {
        let all: Effect.Effect.Success<ReturnType<typeof everyResult>>
        if (q.package_id !== undefined) {
          const label = Ids.decodeAs("package", PROVIDER, q.package_id)
          if (Option.isNone(label)) return { items: [], total: 0 }
          const wire = yield* packageByLabel(session, facility, label.value, q.package_id).pipe(
            Effect.map(Option.some),
            Effect.catchTag("ResourceNotFound", () => Effect.succeed(Option.none<PackageV2>()))
          )
          all = Option.isNone(wire) ? [] : yield* labResultsOfPackage(session, facility, wire.value)
        } else {
          all = yield* everyResult(session, facility, q.updated_since)
        }
        return { items: all.slice(window.offset, window.offset + window.limit), total: all.length }
      }),
    get: (session, facility, providerId) =>
      Effect.gen(function*() {
        const notFound = ProviderError.ResourceNotFound.of("lab_result", Ids.make("lab_result", PROVIDER, providerId))
        if (!/^\d+$/.test(providerId)) return yield* notFound
        // Metrc reads results per package only: the package that holds it, when known, else every one
        const packageId = resultPackages.get(`${session.key}|${facility.provider_facility_id}|${providerId}`, 0)
        if (packageId !== undefined) {
          const rows = (yield* labRows(session, facility, packageId)).filter((r) =>
            labResultProviderId(r) === providerId
          )
          if (rows.length > 0) {
            let label = text(rows[0]!.SourcePackageLabel)
            if (label === null) {
              label = (yield* getOne(session, facility, `/packages/v2/${packageId}`, PackageWire, "lab_results.get", {
                resource: "lab_result",
                id: notFound.id
              })).Label
            }
            const ctx = ctxOf(session, facility)
            const [result] = yield* map("lab_results.get", () => toLabResults(rows, { ...ctx, packageLabel: label }))(
              rows
            )
            return result!
          }
        }
        const found = (yield* everyResult(session, facility, undefined)).find((r) =>
          r.provider_result_id === providerId
        )
        if (found === undefined) return yield* notFound
        return found
      })
  }
}
