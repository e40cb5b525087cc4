import type { Page, ProviderPort, Query } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { Effect, Option } from "effect"
import { byLabel, departuresOf } from "../departures.js"
import type { Enricher } from "../enrich.js"
import { labState, PROVIDER } from "../mappers/context.js"
import { readAcross, readAll } from "../paging.js"
import type { Reader } from "../reader.js"
import { PAGE, skip, upstreamIdOf } from "../reader.js"
import type { PackageV2 } from "../wire/Package.js"
import { PackageV2 as PackageWire } from "../wire/Package.js"

const matchesPackageWire = (q: Query.Packages) => (p: PackageV2) =>
  (q.is_on_hold === undefined || (p.IsOnHold ?? false) === q.is_on_hold) &&
  (q.lab_testing_state === undefined || labState(p.LabTestingState) === q.lab_testing_state) &&
  (q.tag === undefined || p.Label === q.tag)

/**
 * Packages: `/packages/v2/active` (or `/onhold`), by label for a `tag` filter, each enriched with
 * its lab results and source harvests. Filters Metrc cannot apply are applied to the whole list.
 * Departures: `/packages/v2/inactive`, where Metrc moves a package that is finished or has left
 * the facility, read in the same lastModified windows (labels only, no enrichment).
 */
export const packages = (
  reader: Reader,
  { enrichPackage, packageByLabel }: Enricher
): ProviderPort.ResourceDriver<any, Query.Packages> => ({
  list: (session, facility, q, window) =>
    Effect.gen(function*() {
      const { windowed } = reader
      let slice: Page.Slice<PackageV2>
      if (q.tag !== undefined) {
        const one = yield* packageByLabel(session, facility, q.tag, q.tag).pipe(
          Effect.map(Option.some),
          Effect.catchTag("ResourceNotFound", () => Effect.succeed(Option.none<PackageV2>()))
        )
        const all = Option.toArray(one).filter(matchesPackageWire(q))
        slice = { items: all.slice(window.offset, window.offset + window.limit), total: all.length }
      } else {
        const path = q.is_on_hold === true ? "/packages/v2/onhold" : "/packages/v2/active"
        const sources = yield* windowed(session, facility, [path], PackageWire, "packages.list", q.updated_since)
        if (q.is_on_hold === false || q.lab_testing_state !== undefined) {
          const all = (yield* readAll(sources, PAGE)).filter(matchesPackageWire(q))
          slice = { items: all.slice(window.offset, window.offset + window.limit), total: all.length }
        } else {
          slice = yield* readAcross(sources, window, PAGE)
        }
      }
      // a package that cannot be read (or enriched) is left out and reported (tolerant reads)
      const items = yield* Effect.forEach(
        slice.items,
        (w, i) =>
          enrichPackage(session, facility, w).pipe(
            Effect.map((p) => [p]),
            Effect.catchTag(
              "ProviderInvalidResponse",
              (e) => Effect.as(skip(session, "packages.list", upstreamIdOf(w, window.offset + i), e), [])
            )
          ),
        { concurrency: 8 }
      )
      return { items: items.flat(), total: slice.total }
    }),
  departures: departuresOf(reader, "/packages/v2/inactive", "package", byLabel),
  get: (session, facility, label) =>
    Effect.flatMap(
      packageByLabel(session, facility, label, Ids.make("package", PROVIDER, label)),
      (wire) => enrichPackage(session, facility, wire)
    )
})
