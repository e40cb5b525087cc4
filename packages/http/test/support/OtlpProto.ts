/**
 * A decoder of OTLP's `ExportTraceServiceRequest` for tests: the messages of
 * opentelemetry-proto's `trace/v1/trace.proto`, `common/v1/common.proto` and
 * `resource/v1/resource.proto` (the fields a span export uses), read by `protobufjs`, an encoder
 * of its own. A batch decodes to the OTLP/JSON form (hex ids, times as decimal strings), so tests
 * read protobuf and JSON exports alike.
 */
import protobuf from "protobufjs"

const keyValue = { fields: { key: { type: "string", id: 1 }, value: { type: "AnyValue", id: 2 } } }

const root = protobuf.Root.fromJSON({
  nested: {
    ExportTraceServiceRequest: { fields: { resourceSpans: { rule: "repeated", type: "ResourceSpans", id: 1 } } },
    ResourceSpans: {
      fields: {
        resource: { type: "Resource", id: 1 },
        scopeSpans: { rule: "repeated", type: "ScopeSpans", id: 2 },
        schemaUrl: { type: "string", id: 3 }
      }
    },
    Resource: {
      fields: {
        attributes: { rule: "repeated", type: "KeyValue", id: 1 },
        droppedAttributesCount: { type: "uint32", id: 2 }
      }
    },
    ScopeSpans: {
      fields: {
        scope: { type: "InstrumentationScope", id: 1 },
        spans: { rule: "repeated", type: "Span", id: 2 },
        schemaUrl: { type: "string", id: 3 }
      }
    },
    InstrumentationScope: {
      fields: {
        name: { type: "string", id: 1 },
        version: { type: "string", id: 2 },
        attributes: { rule: "repeated", type: "KeyValue", id: 3 },
        droppedAttributesCount: { type: "uint32", id: 4 }
      }
    },
    Span: {
      fields: {
        traceId: { type: "bytes", id: 1 },
        spanId: { type: "bytes", id: 2 },
        traceState: { type: "string", id: 3 },
        parentSpanId: { type: "bytes", id: 4 },
        name: { type: "string", id: 5 },
        kind: { type: "int32", id: 6 },
        startTimeUnixNano: { type: "fixed64", id: 7 },
        endTimeUnixNano: { type: "fixed64", id: 8 },
        attributes: { rule: "repeated", type: "KeyValue", id: 9 },
        droppedAttributesCount: { type: "uint32", id: 10 },
        events: { rule: "repeated", type: "Event", id: 11 },
        droppedEventsCount: { type: "uint32", id: 12 },
        links: { rule: "repeated", type: "Link", id: 13 },
        droppedLinksCount: { type: "uint32", id: 14 },
        status: { type: "Status", id: 15 },
        flags: { type: "fixed32", id: 16 }
      }
    },
    Event: {
      fields: {
        timeUnixNano: { type: "fixed64", id: 1 },
        name: { type: "string", id: 2 },
        attributes: { rule: "repeated", type: "KeyValue", id: 3 },
        droppedAttributesCount: { type: "uint32", id: 4 }
      }
    },
    Link: {
      fields: {
        traceId: { type: "bytes", id: 1 },
        spanId: { type: "bytes", id: 2 },
        traceState: { type: "string", id: 3 },
        attributes: { rule: "repeated", type: "KeyValue", id: 4 },
        droppedAttributesCount: { type: "uint32", id: 5 },
        flags: { type: "fixed32", id: 6 }
      }
    },
    Status: { fields: { message: { type: "string", id: 2 }, code: { type: "int32", id: 3 } } },
    KeyValue: keyValue,
    AnyValue: {
      oneofs: {
        value: {
          oneof: ["stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue"]
        }
      },
      fields: {
        stringValue: { type: "string", id: 1 },
        boolValue: { type: "bool", id: 2 },
        intValue: { type: "int64", id: 3 },
        doubleValue: { type: "double", id: 4 },
        arrayValue: { type: "ArrayValue", id: 5 },
        kvlistValue: { type: "KeyValueList", id: 6 },
        bytesValue: { type: "bytes", id: 7 }
      }
    },
    ArrayValue: { fields: { values: { rule: "repeated", type: "AnyValue", id: 1 } } },
    KeyValueList: { fields: { values: { rule: "repeated", type: "KeyValue", id: 1 } } }
  }
})

const Request = root.lookupType("ExportTraceServiceRequest")

const ID_FIELDS = new Set(["traceId", "spanId", "parentSpanId"])

/** Bytes ids as hex, other bytes as arrays; `int64` and `fixed64` as decimal strings. */
const normalise = (value: unknown, key = ""): unknown => {
  if (value instanceof Uint8Array) {
    return ID_FIELDS.has(key) ? Buffer.from(value).toString("hex") : [...value]
  }
  if (Array.isArray(value)) return value.map((v) => normalise(v))
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = normalise(v, k)
    return out
  }
  return value
}

/**
 * An `ExportTraceServiceRequest` as a plain object in the OTLP/JSON form (fields left at their
 * default are absent, as protobuf has them).
 */
export const decodeTraces = (bytes: Uint8Array): any =>
  normalise(Request.toObject(Request.decode(bytes), { longs: String, oneofs: false }))
