/**
 * `DecodeMessages.refusal` on the issues real schemas give (Effect's `ArrayFormatter`, as the
 * framework reports them): a person reads what was wrong, where, and what is allowed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either, ParseResult, Schema } from "effect"
import * as DecodeMessages from "../src/DecodeMessages.js"

/** The refusal of `input` against `schema`, as a request would get it. */
const refuse = <A, I>(schema: Schema.Schema<A, I>, input: unknown) => {
  const result = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(input)
  if (Either.isRight(result)) throw new Error("expected a failure")
  return DecodeMessages.refusal(ParseResult.ArrayFormatter.formatErrorSync(result.left))
}

const schemaWords = /Encoded side|Type side|ReadonlyArray|Struct|Expected .* actual|\bactual\b/

const Event = Schema.Literal("transfer.arrived", "lab_result.received", "sync.updates_available")
const Webhook = Schema.Struct({ url: Schema.String, events: Schema.Array(Event) }).annotations({
  identifier: "WebhookCreate"
})

describe("DecodeMessages", () => {
  it("a missing required field is missing_parameter, naming it", () => {
    const r = refuse(Webhook, { url: "https://example.com" })
    assert.deepStrictEqual(r, { code: "missing_parameter", param: "events", message: "`events` is required" })
  })

  it("a value outside a closed set names every allowed value", () => {
    const r = refuse(Webhook, { url: "https://example.com", events: ["nope"] })
    assert.strictEqual(r.code, "invalid_parameter")
    assert.strictEqual(r.param, "events.0")
    for (const value of ["transfer.arrived", "lab_result.received", "sync.updates_available"]) {
      assert.include(r.message, value)
    }
    assert.include(r.message, "\"nope\"")
    assert.notMatch(r.message, schemaWords)
  })

  it("an empty body says the body must be an object", () => {
    const r = refuse(Webhook, null)
    assert.strictEqual(r.param, undefined)
    assert.strictEqual(r.message, "The request body must be an object; got null")
  })

  it("a string where a list is expected says a list", () => {
    const r = refuse(Webhook, { url: "https://example.com", events: "transfer.arrived" })
    assert.strictEqual(r.param, "events")
    assert.strictEqual(r.message, "`events` must be a list; got \"transfer.arrived\"")
  })

  it("a flag says true or false", () => {
    const r = refuse(Schema.Struct({ is_on_hold: Schema.Literal("true", "false") }), { is_on_hold: "1" })
    assert.strictEqual(r.message, "`is_on_hold` must be true or false; got \"1\"")
  })

  it("a number out of range says so", () => {
    const r = refuse(Schema.Struct({ limit: Schema.Int.pipe(Schema.between(1, 500)) }), { limit: 9999 })
    assert.strictEqual(r.param, "limit")
    assert.include(r.message, "between 1 and 500")
    assert.include(r.message, "9999")
    assert.notMatch(r.message, schemaWords)
  })

  it("a wrong type names the type in plain words", () => {
    const r = refuse(Schema.Struct({ quantity: Schema.Number }), { quantity: "5" })
    assert.strictEqual(r.message, "`quantity` must be a number; got \"5\"")
  })

  it("a field the request does not have names the fields it does", () => {
    const r = refuse(Webhook, { url: "https://example.com", events: [], colour: "blue" })
    assert.strictEqual(r.code, "invalid_parameter")
    assert.strictEqual(r.param, "colour")
    assert.strictEqual(r.message, "`colour` is not a field of this request; the fields are url, events")
  })

  it("an echoed value is cut at 100 characters", () => {
    const long = "x".repeat(5_000)
    const r = refuse(Webhook, { url: "https://example.com", events: [long] })
    assert.include(r.message, `${"x".repeat(DecodeMessages.MAX_ECHO)}…`)
    assert.notInclude(r.message, "x".repeat(DecodeMessages.MAX_ECHO + 1))
  })

  it("a message the schema wrote for people is kept", () => {
    const Page = Schema.Struct({
      per_page: Schema.Number.pipe(Schema.filter((n) => n <= 100, { message: () => "per_page must be at most 100" }))
    })
    assert.strictEqual(refuse(Page, { per_page: 500 }).message, "per_page must be at most 100")
  })
})

describe("DecodeMessages on optional fields", () => {
  it("an optional field's allowed values leave out undefined", () => {
    const r = refuse(Schema.Struct({ direction: Schema.optional(Schema.Literal("incoming", "outgoing")) }), {
      direction: "sideways"
    })
    assert.strictEqual(r.message, "`direction` must be one of: incoming, outgoing; got \"sideways\"")
  })

  it("an optional field's own message is kept over its type's, naming the field", () => {
    const Digits = Schema.String.pipe(
      Schema.pattern(/^\d+$/, { message: () => "expected a whole number written in digits" })
    )
    const r = refuse(Schema.Struct({ per_page: Schema.optional(Digits) }), { per_page: "abc" })
    assert.strictEqual(r.message, "`per_page`: expected a whole number written in digits")
    assert.strictEqual(r.param, "per_page")
  })
})
