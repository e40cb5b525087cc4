import type { ProviderPort } from "@tracebridge/core"
import type { Ids } from "@tracebridge/core"
import type { Schema } from "effect"
import { Effect } from "effect"
import { byId, departuresOf } from "../departures.js"
import type { MapContext } from "../mappers/context.js"
import { toItem, toLocation, toPatient, toStrain } from "../mappers/toCatalog.js"
import type { Reader } from "../reader.js"
import { mappedWindow } from "../reader.js"
import { ItemV2, LocationV2, PatientV2, StrainV2 } from "../wire/Catalog.js"

/**
 * A catalogue list (`/{area}/v2/active`, in windows for `updated_since`) and its by-id read; with
 * `departs`, its departures: `/{area}/v2/inactive` (deleted entries; Metrc documents no window
 * for it, so it is read whole by the window that reaches now).
 */
const simple = <W, I, A>(
  reader: Reader,
  area: string,
  wire: Schema.Schema<W, I>,
  kind: Ids.Kind,
  toCore: (w: W, ctx: MapContext) => A,
  departs = true
): ProviderPort.ResourceDriver<A, { readonly updated_since?: string | undefined }> => ({
  list: (session, facility, q, window) =>
    Effect.gen(function*() {
      const { ctxOf, windowed } = reader
      const sources = yield* windowed(
        session,
        facility,
        [`/${area}/v2/active`],
        wire,
        `${area}.list`,
        q.updated_since
      )
      const ctx = ctxOf(session, facility)
      return yield* mappedWindow(session, `${area}.list`, sources, window, (w: W) => toCore(w, ctx))
    }),
  get: reader.byId(`/${area}/v2`, wire, kind, `${area}.get`, toCore),
  ...(departs ? { departures: departuresOf(reader, `/${area}/v2/inactive`, kind, byId) } : {})
})

/** Items. */
export const items = (reader: Reader) => simple(reader, "items", ItemV2, "item", toItem)

/** Strains. */
export const strains = (reader: Reader) => simple(reader, "strains", StrainV2, "strain", toStrain)

/** Locations. */
export const locations = (reader: Reader) => simple(reader, "locations", LocationV2, "location", toLocation)

/** Patients (Metrc documents no inactive list of patients). */
export const patients = (reader: Reader) => simple(reader, "patients", PatientV2, "patient", toPatient, false)
