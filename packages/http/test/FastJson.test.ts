import { assert, describe, it } from "@effect/vitest"
import { Envelope, Facility, Resource } from "@tracebridge/core"
import { FastJson } from "@tracebridge/http"
import { Effect, Schema } from "effect"

/** The envelope's bytes as text. */
const stringifyEnvelope = (envelope: unknown) => new TextDecoder().decode(FastJson.encodeEnvelope(envelope))

describe("FastJson", () => {
  it("finds every core resource and envelope schema encodes as itself", () => {
    for (const [name, definition] of Object.entries(Resource.resources)) {
      assert.isTrue(FastJson.isIdentity(definition.schema.ast), name)
      assert.isTrue(FastJson.isIdentity(Envelope.Paginated(definition.schema as Schema.Schema<unknown>).ast), name)
    }
    assert.isTrue(FastJson.isIdentity(Facility.Facility.ast))
  })

  it("sees transformations and declarations, however deep", () => {
    assert.isFalse(FastJson.isIdentity(Schema.NumberFromString.ast))
    assert.isFalse(FastJson.isIdentity(Schema.Struct({ a: Schema.Array(Schema.Struct({ at: Schema.Date })) }).ast))
    assert.isFalse(FastJson.isIdentity(Schema.Union(Schema.String, Schema.DateFromSelf).ast))
    assert.isTrue(FastJson.isIdentity(Schema.Struct({ n: Schema.Number.pipe(Schema.positive()) }).ast))
  })

  it("writes the same bytes as JSON.stringify, and reuses the text of data it has seen", () => {
    const data = [{ id: "pkg_1", quantity: 2.5, tags: ["a"], nested: { x: null } }]
    const envelope = { data, meta: { request_id: "req_1" }, pagination: { page: 1, per_page: 1, total: 1 } }
    assert.strictEqual(stringifyEnvelope(envelope), JSON.stringify(envelope))
    const again = { data, meta: { request_id: "req_2" }, pagination: envelope.pagination }
    assert.strictEqual(stringifyEnvelope(again), JSON.stringify(again))
    assert.strictEqual(stringifyEnvelope({ data }), JSON.stringify({ data }))
    const other = { meta: { a: 1 }, data }
    assert.strictEqual(stringifyEnvelope(other), JSON.stringify(other))
    assert.strictEqual(stringifyEnvelope({ data: "text" }), JSON.stringify({ data: "text" }))
    const unicode = { data: [{ name: "Blüte ☘ 大麻 \u2028" }], meta: { note: "é" } }
    assert.deepStrictEqual(FastJson.encodeEnvelope(unicode), new TextEncoder().encode(JSON.stringify(unicode)))
    assert.deepStrictEqual(FastJson.encodeEnvelope(unicode), new TextEncoder().encode(JSON.stringify(unicode)))
  })

  it.effect("encodes a schema that is not the identity with the schema", () =>
    Effect.gen(function*() {
      const respond = FastJson.responder(Schema.Struct({ data: Schema.Struct({ at: Schema.Date }) }))
      const response = respond({ data: { at: new Date("2026-01-02T03:04:05.000Z") } }, 201)
      assert.strictEqual(response.status, 201)
      const body = response.body as { readonly body: Uint8Array; readonly contentType: string }
      assert.strictEqual(body.contentType, "application/json")
      assert.strictEqual(new TextDecoder().decode(body.body), "{\"data\":{\"at\":\"2026-01-02T03:04:05.000Z\"}}")
    }))
})
