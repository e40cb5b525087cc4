import type { Page as PageModel, ProviderPort, Query } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { Effect, Either, Option } from "effect"
import { mapWire } from "../decode.js"
import { byLabel, departuresOf } from "../departures.js"
import type { Enricher } from "../enrich.js"
import { labState, PROVIDER } from "../mappers/context.js"
import { onHold, toPackage } from "../mappers/toPackage.js"
import { readAll } from "../paging.js"
import type { Reader } from "../reader.js"
import { PAGE, skip, upstreamIdOf } from "../reader.js"
import type { PackageV2 } from "../wire/Package.js"
import { PackageV2 as PackageWire } from "../wire/Package.js"

/**
 * The filters on the wire, read exactly as the mapper reads the fields: `is_on_hold` is any of
 * Metrc's holds (administrative, investigation, recall), as `toPackage` maps it.
 */
const matchesPackageWire = (q: Query.Packages) => (p: PackageV2) =>
  (q.is_on_hold === undefined || onHold(p) === q.is_on_hold) &&
  (q.lab_testing_state === undefined || labState(p.LabTestingState) === q.lab_testing_state) &&
  (q.tag === undefined || p.Label === q.tag)

/**
 * Packages: `/packages/v2/active`, by label for a `tag` filter, each enriched with its lab results
 * and source harvests.
 * - Every filter is applied here, to the whole list, with the mapper's own reading of the field.
 *   `/packages/v2/onhold` is not used for `is_on_hold`: the research does not say that it lists
 *   investigations and recalls, and a package on hold is in `/active` with its flags.
 * - Every row is read, and mapped without its extras, before the window is cut: a row that cannot
 *   be mapped is skipped and never counted, so the total is what the pages deliver (DECISIONS
 *   "Tolerant reads"). Only the window's packages are enriched; one whose extras cannot be read is
 *   skipped too, and the total drops by it.
 * Departures: `/packages/v2/inactive`, where Metrc moves a package that is finished or has left
 * the facility, read in the same lastModified windows (labels only, no enrichment).
 */
export const packages = (
  reader: Reader,
  { enrichPackage, packageByLabel }: Enricher
): ProviderPort.ResourceDriver<any, Query.Packages> => ({
  list: (session, facility, q, window) =>
    Effect.gen(function*() {
      const { ctxOf, windowed } = reader
      let rows: ReadonlyArray<PackageV2>
      if (q.tag !== undefined) {
        const one = yield* packageByLabel(session, facility, q.tag, q.tag).pipe(
          Effect.map(Option.some),
          Effect.catchTag("ResourceNotFound", () => Effect.succeed(Option.none<PackageV2>()))
        )
        rows = Option.toArray(one)
      } else {
        const sources = yield* windowed(
          session,
          facility,
          ["/packages/v2/active"],
          PackageWire,
          "packages.list",
          q.updated_since
        )
        rows = yield* readAll(sources, PAGE)
      }
      // a row the mapper refuses is left out and reported before the count (tolerant reads)
      const ctx = ctxOf(session, facility)
      const readable: Array<PackageV2> = []
      for (const [i, w] of rows.entries()) {
        const mapped = mapWire("packages.list", (x: PackageV2) => toPackage(x, ctx))(w)
        if (Either.isRight(mapped)) readable.push(w)
        else yield* skip(session, "packages.list", upstreamIdOf(w, i), mapped.left)
      }
      const all = readable.filter(matchesPackageWire(q))
      const slice: PageModel.Slice<PackageV2> = {
        items: all.slice(window.offset, window.offset + window.limit),
        total: all.length
      }
      // a package whose extras cannot be read (or enriched) is left out and reported
      const items = (yield* Effect.forEach(
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
      )).flat()
      return { items, total: slice.total - (slice.items.length - items.length) }
    }),
  departures: departuresOf(reader, "/packages/v2/inactive", "package", byLabel),
  get: (session, facility, label) =>
    Effect.flatMap(
      packageByLabel(session, facility, label, Ids.make("package", PROVIDER, label)),
      (wire) => enrichPackage(session, facility, wire)
    )
})
