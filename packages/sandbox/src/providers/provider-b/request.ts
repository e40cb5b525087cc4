/**
 * The value shapes the emulator accepts in BioTrack request bodies, its own (not the adapter's
 * wire schemas): BioTrack's clients send numbers as numbers or as strings (`"10"`, `10`), times
 * as epoch seconds, ids as strings or numbers (research `provider-payloads/biotrack-*.json`).
 */
import { ParseResult, Schema } from "effect"

const decimal = /^\s*-?\d+(\.\d+)?\s*$/

/** A 16-digit barcode. */
export const Barcode = Schema.String.pipe(
  Schema.pattern(/^\d{16}$/, { message: (issue) => `expected a 16-digit barcode, got ${JSON.stringify(issue.actual)}` })
)

/** A quantity: a finite number, or a string of one (`"10"`, `"2.50"`). */
export const Quantity = Schema.transformOrFail(Schema.Union(Schema.String, Schema.Number), Schema.Number, {
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
})

/** A whole-number code (`28` or `"28"`). */
export const Code = Quantity.pipe(Schema.filter((n) => Number.isInteger(n) || `expected a whole number, got ${n}`))

/** Epoch seconds; `0`, `"0"`, `""` and `null` mean no time. */
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
    encode: (n) => ParseResult.succeed(n)
  }
)

/** An identifier sent as a string or a number (licences, stop numbers), trimmed. */
export const Id = Schema.transformOrFail(Schema.Union(Schema.String, Schema.Number), Schema.String, {
  strict: true,
  decode: (u, _, ast) =>
    String(u).trim().length > 0
      ? ParseResult.succeed(String(u).trim())
      : ParseResult.fail(new ParseResult.Type(ast, u, "expected a non-empty identifier")),
  encode: ParseResult.succeed
})

/** A lab's id in `inventory_qa_sample` (`lab_id`): a licence or a name, a string or a number. */
export const LabId = Schema.Union(Schema.String, Schema.Number).pipe(
  Schema.transform(Schema.String.pipe(Schema.minLength(1)), { strict: true, decode: String, encode: (s) => s })
)

/** A result panel a lab files: `type` 1 to 8 and its values by name (numbers, strings or null). */
export const Panel = Schema.Struct(
  { type: Code.pipe(Schema.filter((n) => (n >= 1 && n <= 8) || `expected a panel type 1 to 8, got ${n}`)) },
  Schema.Record({ key: Schema.String, value: Schema.NullOr(Quantity) })
)
