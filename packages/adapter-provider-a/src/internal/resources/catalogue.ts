import type { Ids, ProviderPort } from "@tracebridge/core"
import type { Schema } from "effect"
import { Effect } from "effect"
import type { MapContext } from "../mappers/context.js"
import { toItem, toLocation, toPatient, toStrain } from "../mappers/toCatalog.js"
import { readAcross } from "../paging.js"
import type { Reader } from "../reader.js"
import { mapRows, PAGE } from "../reader.js"
import { ItemV2, LocationV2, PatientV2, StrainV2 } from "../wire/Catalog.js"

/** A catalogue list (`/{area}/v2/active`, in windows for `updated_since`) and its by-id read. */
const simple = <W, I, A>(
  { byId, ctxOf, windowed }: Reader,
  area: string,
  wire: Schema.Schema<W, I>,
  kind: Ids.Kind,
  toCore: (w: W, ctx: MapContext) => A
): ProviderPort.ResourceDriver<A, { readonly updated_since?: string | undefined }> => ({
  list: (session, facility, q, window) =>
    Effect.gen(function*() {
      const sources = yield* windowed(
        session,
        facility,
        [`/${area}/v2/active`],
        wire,
        `${area}.list`,
        q.updated_since
      )
      const slice = yield* readAcross(sources, window, PAGE)
      const ctx = ctxOf(session, facility)
      const items = yield* mapRows(session, `${area}.list`, slice.items, (w: W) => toCore(w, ctx))
      return { items, total: slice.total }
    }),
  get: byId(`/${area}/v2`, wire, kind, `${area}.get`, toCore)
})

/** Items. */
export const items = (reader: Reader) => simple(reader, "items", ItemV2, "item", toItem)

/** Strains. */
export const strains = (reader: Reader) => simple(reader, "strains", StrainV2, "strain", toStrain)

/** Locations. */
export const locations = (reader: Reader) => simple(reader, "locations", LocationV2, "location", toLocation)

/** Patients. */
export const patients = (reader: Reader) => simple(reader, "patients", PatientV2, "patient", toPatient)
