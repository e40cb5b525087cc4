import { Schema } from "effect"
import { register } from "../keys.js"
import { isMetrcTime } from "../time.js"

/** A `Schema.Struct` whose field names become the canonical spelling of their keys. */
export const struct = <F extends Schema.Struct.Fields>(fields: F): Schema.Struct<F> => {
  register(Object.keys(fields))
  return Schema.Struct(fields)
}

/** A field that may be absent or null; decodes to `null` when absent. */
export const opt = <A, I, R>(schema: Schema.Schema<A, I, R>) =>
  Schema.optionalWith(Schema.NullOr(schema), { default: () => null })

/** A Metrc date, date-time or placeholder (`0001-01-01…`). */
export const MetrcTime = Schema.String.pipe(
  Schema.filter((s) => isMetrcTime(s) || `expected a Metrc date or date-time, got ${JSON.stringify(s)}`)
)

/** The v2 page wrapper of every paginated list. */
export const Paged = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  struct({
    Data: Schema.Array(item),
    Total: Schema.Finite,
    TotalRecords: Schema.optional(Schema.Finite),
    PageSize: Schema.optional(Schema.Finite),
    RecordsOnPage: Schema.optional(Schema.Finite),
    Page: Schema.optional(Schema.Finite),
    CurrentPage: Schema.optional(Schema.Finite),
    TotalPages: Schema.optional(Schema.Finite)
  })

/** A v2 POST answer: the ids created, in the order posted. */
export const WriteResult = struct({
  Ids: Schema.Array(Schema.Finite),
  Warnings: opt(Schema.Unknown)
})

/** A 400 row of a write: one per failing object of the request array. */
export const ErrorRow = struct({ row: Schema.optional(Schema.Finite), message: Schema.String })

/** A request-level error body. */
export const ErrorMessage = struct({ Message: Schema.String })

register(["row", "message"])
