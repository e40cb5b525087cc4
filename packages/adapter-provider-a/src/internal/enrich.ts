import type { Session } from "@tracebridge/core"
import { Effect } from "effect"
import { TtlCache } from "./cache.js"
import { labState, text } from "./mappers/context.js"
import { toLabResults } from "./mappers/toLabResults.js"
import { toPackage } from "./mappers/toPackage.js"
import { readAll } from "./paging.js"
import type { FacilityRef, Reader } from "./reader.js"
import { map, PAGE } from "./reader.js"
import { LabTestResultRow } from "./wire/LabTest.js"
import type { PackageV2 } from "./wire/Package.js"
import { PackageSourceHarvest, PackageV2 as PackageWire } from "./wire/Package.js"

/** Lab testing states that mean no result exists yet, so no results call is made. */
export const untested = new Set(["NotSubmitted", "NotRequired"])

/**
 * What a Metrc package needs from other calls to become a core package: its lab results (one
 * results call per tested package) and its source harvests (one call per package that names
 * some, cached for the driver's life: they never change).
 */
export const makeEnricher = (reader: Reader) => {
  const { ctxOf, getOne, license, paged } = reader

  const sourceHarvestCache = new TtlCache<ReadonlyArray<number>>(Number.POSITIVE_INFINITY, 50_000)

  /**
   * Which package each lab result was last read through (`{login}|{licence}|{LabTestResultId}` →
   * Metrc package id), so that a result is read by id from its package without a walk. Results
   * never move between packages; up to 100,000 entries live as long as the driver.
   */
  const resultPackages = new TtlCache<number>(Number.POSITIVE_INFINITY, 100_000)

  const labRows = (session: Session.Session, facility: FacilityRef, packageId: number) =>
    Effect.tap(
      readAll(
        [paged(session, facility, "/labtests/v2/results", LabTestResultRow, "lab_results.list", {
          packageId: String(packageId)
        })],
        PAGE
      ),
      (rows) =>
        Effect.sync(() => {
          for (const row of rows) {
            resultPackages.set(`${session.key}|${license(facility)}|${row.LabTestResultId}`, packageId, 0)
          }
        })
    )

  const sourceHarvests = (session: Session.Session, facility: FacilityRef, wire: PackageV2) =>
    Effect.gen(function*() {
      if (
        wire.SourceHarvestCount === 0 || (wire.SourceHarvestCount === null && text(wire.SourceHarvestNames) === null)
      ) {
        return []
      }
      const key = `${session.key}|${license(facility)}|${wire.Id}`
      const cached = sourceHarvestCache.get(key, 0)
      if (cached !== undefined) return cached
      const rows = yield* readAll(
        [paged(
          session,
          facility,
          `/packages/v2/${wire.Id}/source/harvests`,
          PackageSourceHarvest,
          "packages.sourceHarvests"
        )],
        PAGE
      )
      const ids = rows.map((r) => r.HarvestId)
      sourceHarvestCache.set(key, ids, 0)
      return ids
    })

  const enrichPackage = (session: Session.Session, facility: FacilityRef, wire: PackageV2) =>
    Effect.gen(function*() {
      const state = labState(wire.LabTestingState)
      const [rows, harvestIds] = yield* Effect.all([
        state === null || untested.has(state) ? Effect.succeed([]) : labRows(session, facility, wire.Id),
        sourceHarvests(session, facility, wire)
      ], { concurrency: 2 })
      const ctx = ctxOf(session, facility)
      return yield* map("packages.list", () =>
        toPackage(wire, ctx, {
          labResults: toLabResults(rows, { ...ctx, packageLabel: wire.Label }),
          sourceHarvestIds: harvestIds
        }))(wire)
    })

  const packageByLabel = (session: Session.Session, facility: FacilityRef, label: string, id: string) =>
    getOne(session, facility, `/packages/v2/${encodeURIComponent(label)}`, PackageWire, "packages.get", {
      resource: "package",
      id
    })

  const labResultsOfPackage = (session: Session.Session, facility: FacilityRef, wire: PackageV2) =>
    Effect.flatMap(labRows(session, facility, wire.Id), (rows) => {
      const ctx = ctxOf(session, facility)
      return map("lab_results.list", () => toLabResults(rows, { ...ctx, packageLabel: wire.Label }))(rows)
    })

  return { labRows, enrichPackage, packageByLabel, labResultsOfPackage, resultPackages }
}

/** The enrichment tools of one driver. */
export type Enricher = ReturnType<typeof makeEnricher>
