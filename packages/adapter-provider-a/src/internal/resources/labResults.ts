import type { ProviderPort, Query } from "@tracebridge/core"
import { Ids, ProviderError } from "@tracebridge/core"
import { Effect, Option } from "effect"
import type { Enricher } from "../enrich.js"
import { untested } from "../enrich.js"
import { labState, PROVIDER, text } from "../mappers/context.js"
import { labResultProviderId, toLabResults } from "../mappers/toLabResults.js"
import { readAll } from "../paging.js"
import type { Reader } from "../reader.js"
import { map, PAGE } from "../reader.js"
import type { PackageV2 } from "../wire/Package.js"
import { PackageV2 as PackageWire } from "../wire/Package.js"

/**
 * Lab results: Metrc reads them per package only (`/labtests/v2/results?packageId=`), so a list
 * reads them for one package, or for every tested active package.
 */
export const labResults = (
  { ctxOf, getOne, windowed }: Reader,
  { labResultsOfPackage, labRows, packageByLabel }: Enricher
): ProviderPort.ResourceDriver<any, Query.LabResults> => ({
  list: (session, facility, q, window) =>
    Effect.gen(function*() {
      let all: ReadonlyArray<any>
      if (q.package_id !== undefined) {
        const label = Ids.decodeAs("package", PROVIDER, q.package_id)
        if (Option.isNone(label)) return { items: [], total: 0 }
        const wire = yield* packageByLabel(session, facility, label.value, q.package_id).pipe(
          Effect.map(Option.some),
          Effect.catchTag("ResourceNotFound", () => Effect.succeed(Option.none<PackageV2>()))
        )
        all = Option.isNone(wire) ? [] : yield* labResultsOfPackage(session, facility, wire.value)
      } else {
        // Metrc reads results per package only: read them for every tested active package.
        const sources = yield* windowed(
          session,
          facility,
          ["/packages/v2/active"],
          PackageWire,
          "lab_results.list",
          q.updated_since
        )
        const tested = (yield* readAll(sources, PAGE)).filter((p) => {
          const state = labState(p.LabTestingState)
          return state !== null && !untested.has(state)
        })
        all = (yield* Effect.forEach(tested, (p) => labResultsOfPackage(session, facility, p), { concurrency: 8 }))
          .flat()
      }
      return { items: all.slice(window.offset, window.offset + window.limit), total: all.length }
    }),
  get: (session, facility, providerId) =>
    Effect.gen(function*() {
      const notFound = ProviderError.ResourceNotFound.of("lab_result", Ids.make("lab_result", PROVIDER, providerId))
      const m = /^(\d+)-(\d+)$/.exec(providerId)
      if (m === null) return yield* notFound
      const rows = yield* labRows(session, facility, Number(m[1]))
      const mine = rows.filter((r) => labResultProviderId(r) === providerId)
      if (mine.length === 0) return yield* notFound
      let label = text(mine[0]!.SourcePackageLabel)
      if (label === null) {
        label = (yield* getOne(session, facility, `/packages/v2/${m[1]}`, PackageWire, "lab_results.get", {
          resource: "lab_result",
          id: notFound.id
        })).Label
      }
      const ctx = ctxOf(session, facility)
      const [result] = yield* map("lab_results.get", () => toLabResults(mine, { ...ctx, packageLabel: label }))(mine)
      return result!
    })
})
