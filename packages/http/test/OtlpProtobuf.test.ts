/**
 * `OtlpProtobuf`: an OTLP/JSON trace batch, as `@effect/opentelemetry`'s `OtlpTracer` builds it,
 * encoded by OpenTelemetry's serializer. Checked by decoding with an independent protobuf reader
 * (`protobufjs` over the OTLP messages, `support/OtlpProto.ts`): every field a span carries, and the
 * same message as `@effect/opentelemetry`'s own protobuf encoder makes of the same batch.
 */
import { OtlpSerialization } from "@effect/opentelemetry"
import { assert, describe, it } from "@effect/vitest"
import { OtlpProtobuf } from "@tracebridge/http"
import { Effect } from "effect"
import { decodeTraces } from "./support/OtlpProto.js"

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"

const batch = {
  resourceSpans: [{
    resource: {
      attributes: [
        { key: "service.name", value: { stringValue: "tracebridge-test" } },
        { key: "deployment.environment", value: { stringValue: "test" } }
      ],
      droppedAttributesCount: 0
    },
    scopeSpans: [{
      scope: { name: "tracebridge-test" },
      spans: [
        {
          traceId: TRACE,
          spanId: "00f067aa0ba902b7",
          parentSpanId: "1111111111111111",
          name: "GET /v1/connections/:connection_id/facilities/:facility_id/packages",
          kind: 2,
          startTimeUnixNano: "1764380000123456789",
          endTimeUnixNano: "1764380000223456789",
          attributes: [
            { key: "http.request.method", value: { stringValue: "GET" } },
            { key: "http.response.status_code", value: { intValue: 200 } },
            { key: "tracebridge.governor_wait_ms", value: { doubleValue: 1.5 } },
            { key: "tracebridge.cached", value: { boolValue: true } },
            {
              key: "tracebridge.resources",
              value: { arrayValue: { values: [{ stringValue: "a" }, { stringValue: "b" }] } }
            }
          ],
          droppedAttributesCount: 0,
          events: [],
          droppedEventsCount: 0,
          status: { code: 1 },
          links: [{
            traceId: "0af7651916cd43dd8448eb211c80319c",
            spanId: "b7ad6b7169203331",
            attributes: [{ key: "tracebridge.link", value: { stringValue: "cause" } }],
            droppedAttributesCount: 0
          }],
          droppedLinksCount: 0
        },
        {
          traceId: TRACE,
          spanId: "2222222222222222",
          name: "sql.execute",
          kind: 1,
          startTimeUnixNano: "1764380000123500000",
          endTimeUnixNano: "1764380000123900000",
          attributes: [{ key: "db.system.name", value: { stringValue: "sqlite" } }],
          droppedAttributesCount: 0,
          events: [{
            name: "exception",
            timeUnixNano: "1764380000123900000",
            droppedAttributesCount: 0,
            attributes: [{ key: "exception.message", value: { stringValue: "[redacted]" } }]
          }],
          droppedEventsCount: 0,
          status: { code: 2, message: "failed" },
          links: [],
          droppedLinksCount: 0
        }
      ]
    }]
  }]
}

/** What both encoders write alike: OpenTelemetry's also writes span flags and zero counts. */
const comparable = (decoded: any) => ({
  resource: decoded.resourceSpans[0].resource.attributes,
  scope: decoded.resourceSpans[0].scopeSpans[0].scope.name,
  spans: decoded.resourceSpans[0].scopeSpans[0].spans.map((s: any) => ({
    traceId: s.traceId,
    spanId: s.spanId,
    parentSpanId: s.parentSpanId,
    name: s.name,
    kind: s.kind,
    start: s.startTimeUnixNano,
    end: s.endTimeUnixNano,
    attributes: s.attributes,
    events: (s.events ?? []).map((e: any) => ({ name: e.name, time: e.timeUnixNano, attributes: e.attributes })),
    links: (s.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId, attributes: l.attributes })),
    status: s.status
  }))
})

describe("OtlpProtobuf", () => {
  it("encodes every field of a span so that a protobuf reader gets the batch back", () => {
    const decoded = decodeTraces(OtlpProtobuf.encodeTraces(batch))
    const [server, sql] = decoded.resourceSpans[0].scopeSpans[0].spans
    assert.deepStrictEqual(decoded.resourceSpans[0].resource.attributes, batch.resourceSpans[0]!.resource.attributes)
    assert.strictEqual(decoded.resourceSpans[0].scopeSpans[0].scope.name, "tracebridge-test")
    assert.strictEqual(server.traceId, TRACE)
    assert.strictEqual(server.spanId, "00f067aa0ba902b7")
    assert.strictEqual(server.parentSpanId, "1111111111111111")
    assert.strictEqual(server.name, "GET /v1/connections/:connection_id/facilities/:facility_id/packages")
    assert.strictEqual(server.kind, 2, "server")
    assert.strictEqual(server.startTimeUnixNano, "1764380000123456789", "nanoseconds kept exactly")
    assert.strictEqual(server.endTimeUnixNano, "1764380000223456789")
    assert.deepStrictEqual(server.attributes, [
      { key: "http.request.method", value: { stringValue: "GET" } },
      { key: "http.response.status_code", value: { intValue: "200" } },
      { key: "tracebridge.governor_wait_ms", value: { doubleValue: 1.5 } },
      { key: "tracebridge.cached", value: { boolValue: true } },
      {
        key: "tracebridge.resources",
        value: { arrayValue: { values: [{ stringValue: "a" }, { stringValue: "b" }] } }
      }
    ])
    assert.strictEqual(server.status.code, 1)
    assert.strictEqual(server.links[0].traceId, "0af7651916cd43dd8448eb211c80319c")
    assert.strictEqual(server.links[0].spanId, "b7ad6b7169203331")
    assert.deepStrictEqual(server.links[0].attributes, [{ key: "tracebridge.link", value: { stringValue: "cause" } }])
    assert.strictEqual(sql.kind, 1, "internal")
    assert.isUndefined(sql.parentSpanId, "a root span has no parent")
    assert.deepStrictEqual(sql.status, { code: 2, message: "failed" })
    assert.strictEqual(sql.events[0].name, "exception")
    assert.strictEqual(sql.events[0].timeUnixNano, "1764380000123900000")
    assert.deepStrictEqual(sql.events[0].attributes, [{
      key: "exception.message",
      value: { stringValue: "[redacted]" }
    }])
  })

  it.effect("makes the message @effect/opentelemetry's own encoder makes of the same batch", () =>
    Effect.gen(function*() {
      const effects = yield* Effect.provide(OtlpSerialization.OtlpSerialization, OtlpSerialization.layerProtobuf)
      const theirs = effects.traces(batch)
      assert.strictEqual(theirs._tag, "Uint8Array")
      const ours = yield* Effect.provide(OtlpSerialization.OtlpSerialization, OtlpProtobuf.layer)
      const body = ours.traces(batch)
      assert.strictEqual(body._tag, "Uint8Array")
      assert.strictEqual(body.contentType, "application/x-protobuf")
      assert.deepStrictEqual(
        comparable(decodeTraces((body as { body: Uint8Array }).body)),
        comparable(decodeTraces((theirs as { body: Uint8Array }).body))
      )
    }))

  it("encodes an empty message for a batch it cannot read", () => {
    assert.deepStrictEqual(decodeTraces(OtlpProtobuf.encodeTraces({ nothing: true })), {})
  })
})
