/**
 * The departures of a list (`ProviderPort.ResourceDriver.departures`): the records on one of
 * Metrc's inactive lists changed since `since`, read in the same windows as the active list (or
 * whole, for a list Metrc documents no window for), keys only: a package's or plant's `Label`, a
 * catalogue entry's `Id`.
 */
import type { Ids, ProviderPort } from "@tracebridge/core"
import { Ids as CoreIds } from "@tracebridge/core"
import { Effect, Schema } from "effect"
import { PROVIDER } from "./mappers/context.js"
import { readAcross } from "./paging.js"
import type { Reader } from "./reader.js"
import { PAGE } from "./reader.js"

/** What a departure needs of an inactive package or plant row: its `Label`. */
export const byLabel = {
  schema: Schema.Struct({ Label: Schema.String }),
  keyOf: (row: { readonly Label: string }) => row.Label
}

/** What a departure needs of an inactive catalogue row: its `Id`. */
export const byId = {
  schema: Schema.Struct({ Id: Schema.Finite }),
  keyOf: (row: { readonly Id: number }) => String(row.Id)
}

/** The departures of the records on `path`, as core ids of `kind` made from each row's key. */
export const departuresOf = <A, I>(
  { windowed }: Reader,
  path: string,
  kind: Ids.Kind,
  key: { readonly schema: Schema.Schema<A, I>; readonly keyOf: (row: A) => string }
): NonNullable<ProviderPort.ResourceDriver<unknown, unknown>["departures"]> =>
(session, facility, since, window) =>
  Effect.gen(function*() {
    const operation = `${path.split("/")[1]}.departures`
    const sources = yield* windowed(session, facility, [path], key.schema, operation, since)
    const slice = yield* readAcross(sources, window, PAGE)
    return { items: slice.items.map((row) => CoreIds.make(kind, PROVIDER, key.keyOf(row))), total: slice.total }
  })
