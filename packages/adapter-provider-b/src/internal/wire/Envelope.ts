/**
 * The envelope of every answer: HTTP 200 with `success` 1 or 0; failures carry `error` (text)
 * and usually `errorcode`.
 */
import { Schema } from "effect"
import { Barcode, Epoch, IdString, ManifestId } from "./Common.js"

/** The API version sent in every body. */
export const API_VERSION = "4.0"

/** `{ success: 0, error, errorcode? }`. */
export const Failure = Schema.Struct({
  success: Schema.Union(Schema.Literal(0), Schema.Literal("0")),
  error: Schema.optionalWith(Schema.String, { default: () => "Unknown error" }),
  errorcode: Schema.optional(Schema.Union(Schema.Number, Schema.String))
})
/** A failed answer. */
export type Failure = typeof Failure.Type

/** `{ success: 1, … }`. */
export const Success = Schema.Struct({ success: Schema.Union(Schema.Literal(1), Schema.Literal("1")) })

/** The answer to `login`. */
export const LoginResult = Schema.Struct({
  success: Schema.Union(Schema.Literal(1), Schema.Literal("1")),
  sessionid: Schema.String.pipe(Schema.minLength(1)),
  admin: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
  time: Schema.optional(Epoch)
})

/**
 * The answer to a write: a transaction id, the barcodes it created, if any, and after
 * `inventory_manifest` the new manifest's id (a string; see {@link ManifestId}).
 */
export const WriteResult = Schema.Struct({
  success: Schema.Union(Schema.Literal(1), Schema.Literal("1")),
  transactionid: IdString,
  sessiontime: Schema.optional(Epoch),
  barcode_id: Schema.optionalWith(Schema.Array(Barcode), { default: () => [] }),
  manifest_id: Schema.optional(ManifestId)
})
/** A write's answer. */
export type WriteResult = typeof WriteResult.Type
