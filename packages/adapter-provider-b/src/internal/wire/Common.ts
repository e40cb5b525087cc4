/**
 * The value shapes of the BioTrack classic API: numbers that arrive as strings, epoch-second
 * times, "0"/"1" booleans, ids that are sometimes numbers, and barcode lists that are a string,
 * an array or null. Each decodes strictly: a malformed value fails and names its field.
 */
import { ParseResult, Schema } from "effect"

const decimal = /^\s*-?\d+(\.\d+)?\s*$/

/** A number, or a string of a number ("300.00"), decoded to a finite number; encoded as a string. */
export const StringNumber = Schema.transformOrFail(Schema.Union(Schema.String, Schema.Number), Schema.Number, {
  strict: true,
  decode: (u, _, ast) => {
    if (typeof u === "number") {
      return Number.isFinite(u)
        ? ParseResult.succeed(u)
        : ParseResult.fail(new ParseResult.Type(ast, u, `expected a finite number, got ${u}`))
    }
    return decimal.test(u)
      ? ParseResult.succeed(Number(u))
      : ParseResult.fail(
        new ParseResult.Type(ast, u, `expected a number written as a string, got ${JSON.stringify(u)}`)
      )
  },
  encode: (n) => ParseResult.succeed(String(n))
}).annotations({ identifier: "StringNumber" })

/** An integer code ("28" or 28). */
export const Code = StringNumber.pipe(
  Schema.filter((n) => Number.isInteger(n) || `expected a whole number, got ${n}`)
)

/**
 * Unix epoch seconds (a number or a string of digits). `0`, `"0"`, `""` and `null` mean "no time"
 * and decode to `null`.
 */
export const Epoch = Schema.transformOrFail(
  Schema.Union(Schema.String, Schema.Number, Schema.Null),
  Schema.NullOr(Schema.Number),
  {
    strict: true,
    decode: (u, _, ast) => {
      if (u === null || u === "" || u === 0 || u === "0") return ParseResult.succeed(null)
      const n = typeof u === "number" ? u : /^\s*\d+\s*$/.test(u) ? Number(u) : NaN
      return Number.isInteger(n) && n > 0
        ? ParseResult.succeed(n)
        : ParseResult.fail(new ParseResult.Type(ast, u, `expected epoch seconds, got ${JSON.stringify(u)}`))
    },
    encode: (n) => ParseResult.succeed(n === null ? null : String(n))
  }
).annotations({ identifier: "Epoch" })

/** "0"/"1", 0/1 or booleans; `null` reads as false. Encoded as "0"/"1". */
export const Flag = Schema.transformOrFail(
  Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null),
  Schema.Boolean,
  {
    strict: true,
    decode: (u, _, ast) => {
      if (u === null || u === false || u === 0 || u === "0" || u === "") return ParseResult.succeed(false)
      if (u === true || u === 1 || u === "1") return ParseResult.succeed(true)
      return ParseResult.fail(new ParseResult.Type(ast, u, `expected "0" or "1", got ${JSON.stringify(u)}`))
    },
    encode: (b) => ParseResult.succeed(b ? "1" : "0")
  }
).annotations({ identifier: "Flag" })

/** An identifier that may arrive as a number (transaction ids, room ids, stop numbers). */
export const IdString = Schema.transformOrFail(Schema.Union(Schema.String, Schema.Number), Schema.String, {
  strict: true,
  decode: (u, _, ast) =>
    String(u).trim().length > 0
      ? ParseResult.succeed(String(u).trim())
      : ParseResult.fail(new ParseResult.Type(ast, u, "expected a non-empty identifier")),
  encode: ParseResult.succeed
}).annotations({ identifier: "IdString" })

/** The 16-digit barcode that is both id and tag of inventory, plants and manifests. */
export const Barcode = Schema.String.pipe(
  Schema.pattern(/^\d{16}$/, { message: (issue) => `expected a 16-digit barcode, got ${JSON.stringify(issue.actual)}` })
).annotations({ identifier: "Barcode" })

/**
 * A manifest id: a 16-digit string, kept a string end to end. BioTrack answers it as a string; a
 * JSON number is taken only when it is a safe integer of 16 digits, since a larger one was
 * already rounded by the JSON parser and a shorter one lost its leading zeros: either would name
 * another manifest, so it fails (naming the field) instead.
 */
export const ManifestId = Schema.transformOrFail(Schema.Union(Schema.String, Schema.Number), Barcode, {
  strict: true,
  decode: (u, _, ast) => {
    if (typeof u === "string") return ParseResult.succeed(u)
    return Number.isSafeInteger(u) && u > 0 && String(u).length === 16
      ? ParseResult.succeed(String(u))
      : ParseResult.fail(
        new ParseResult.Type(
          ast,
          u,
          `expected a 16-digit manifest id as a string, got the number ${u}, which cannot be read exactly`
        )
      )
  },
  encode: ParseResult.succeed
}).annotations({ identifier: "ManifestId" })

/** A free text that may come as a number (a plate, a model), as a string. */
export const Label = Schema.transform(Schema.Union(Schema.String, Schema.Number), Schema.String, {
  strict: true,
  decode: (u) => String(u),
  encode: (s) => s
})

/** A label that may be missing or null. */
export const OptionalLabel = Schema.optionalWith(Schema.NullOr(Label), { default: () => null })

/** One barcode, a list of them, or nothing: decoded to a list. */
export const BarcodeList = Schema.transform(
  Schema.Union(Barcode, Schema.Array(Barcode), Schema.Null),
  Schema.Array(Barcode),
  {
    strict: true,
    decode: (u) => (u === null ? [] : typeof u === "string" ? [u] : u),
    encode: (list) => list
  }
)

/** A string that may be missing or null. */
export const OptionalText = Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
/** A number that may be missing or null. */
export const OptionalNumber = Schema.optionalWith(Schema.NullOr(StringNumber), { default: () => null })
/** A time that may be missing, null or zero. */
export const OptionalEpoch = Schema.optionalWith(Epoch, { default: () => null })
/** A flag that may be missing. */
export const OptionalFlag = Schema.optionalWith(Flag, { default: () => false })
/** A barcode list that may be missing. */
export const OptionalBarcodes = Schema.optionalWith(BarcodeList, { default: () => [] })

/** The bookkeeping columns every sync row carries. */
export const syncColumns = {
  deleted: OptionalFlag,
  sessiontime: OptionalEpoch,
  transactionid: IdString,
  transactionid_original: Schema.optional(IdString)
}
