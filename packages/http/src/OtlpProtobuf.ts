/**
 * OTLP trace batches in protobuf, encoded by OpenTelemetry's own serializer
 * (`ProtobufTraceSerializer` of `@opentelemetry/otlp-transformer`, which sizes the message first and
 * writes it into one buffer) instead of `@effect/opentelemetry`'s encoder, which builds each field
 * as its own byte array and concatenates them: about 53 µs a span against 4 µs here, measured on a
 * batch of this server's own spans (issue #32, bench row 10, `docs/performance.md`).
 *
 * `OtlpTracer` hands its serialization the OTLP/JSON form of a batch (hex ids, times as decimal
 * nanosecond strings, attributes as `{ key, value: { stringValue } }`); {@link toReadableSpans}
 * turns that form into the span shape the serializer reads. Metrics and logs keep
 * `@effect/opentelemetry`'s protobuf encoding (they are a few hundred bytes a minute).
 *
 * @since 0.1.0
 */
import { OtlpSerialization } from "@effect/opentelemetry"
import { HttpBody } from "@effect/platform"
import type { Attributes, AttributeValue, HrTime, Link, SpanContext, SpanKind } from "@opentelemetry/api"
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer"
import type { Resource } from "@opentelemetry/resources"
import { resourceFromAttributes } from "@opentelemetry/resources"
import { Effect, Layer } from "effect"

/** A span as the serializer reads it (`ReadableSpan` of `@opentelemetry/sdk-trace`). */
type ReadableSpan = Parameters<typeof ProtobufTraceSerializer.serializeRequest>[0][number]

/** OTLP/JSON's `AnyValue`, as `@effect/opentelemetry` writes it. */
interface JsonAnyValue {
  readonly stringValue?: string
  readonly boolValue?: boolean
  readonly intValue?: number | string
  readonly doubleValue?: number
  readonly arrayValue?: { readonly values: ReadonlyArray<JsonAnyValue> }
}

interface JsonKeyValue {
  readonly key: string
  readonly value: JsonAnyValue
}

interface JsonSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string | undefined
  readonly name: string
  readonly kind: number
  readonly startTimeUnixNano: string
  readonly endTimeUnixNano: string
  readonly attributes: ReadonlyArray<JsonKeyValue>
  readonly events: ReadonlyArray<
    { readonly name: string; readonly timeUnixNano: string; readonly attributes: ReadonlyArray<JsonKeyValue> }
  >
  readonly links: ReadonlyArray<
    { readonly traceId: string; readonly spanId: string; readonly attributes: ReadonlyArray<JsonKeyValue> }
  >
  readonly status: { readonly code: number; readonly message?: string | undefined }
}

interface JsonTraces {
  readonly resourceSpans: ReadonlyArray<{
    readonly resource: { readonly attributes: ReadonlyArray<JsonKeyValue> }
    readonly scopeSpans: ReadonlyArray<{
      readonly scope: { readonly name: string; readonly version?: string | undefined }
      readonly spans: ReadonlyArray<JsonSpan>
    }>
  }>
}

const isJsonTraces = (data: unknown): data is JsonTraces =>
  typeof data === "object" && data !== null && Array.isArray((data as { resourceSpans?: unknown }).resourceSpans)

const scalar = (value: JsonAnyValue): string | number | boolean | undefined => {
  if (value.stringValue !== undefined) return value.stringValue
  if (value.boolValue !== undefined) return value.boolValue
  if (value.intValue !== undefined) return Number(value.intValue)
  return value.doubleValue
}

const anyValue = (value: JsonAnyValue): AttributeValue | undefined => {
  if (value.arrayValue === undefined) return scalar(value)
  // OpenTelemetry's attribute arrays are homogeneous; the serializer writes each item as it is.
  const items: Array<string | number | boolean | null> = []
  for (const item of value.arrayValue.values) {
    const v = scalar(item)
    items.push(v === undefined ? null : v)
  }
  return items as AttributeValue
}

const attributesOf = (list: ReadonlyArray<JsonKeyValue>): Attributes => {
  const out: Attributes = {}
  for (const { key, value } of list) {
    const v = anyValue(value)
    if (v !== undefined) out[key] = v
  }
  return out
}

/** A decimal nanosecond string as `[seconds, nanoseconds]` (split as text: no BigInt per time). */
const hrTime = (nanos: string): HrTime =>
  nanos.length <= 9 ? [0, Number(nanos)] : [Number(nanos.slice(0, -9)), Number(nanos.slice(-9))]

const SAMPLED = 1

/** OTLP's kind (1 internal … 5 consumer; 0 unspecified) as OpenTelemetry's `SpanKind` (0 internal … 4 consumer). */
const spanKind = (kind: number): SpanKind => (kind > 0 ? kind - 1 : 0) as SpanKind

const resources = new WeakMap<object, Resource>()

const none: ReadonlyArray<never> = []

/** A status with no message, one object per code (the serializer only reads it). */
const statuses = [{ code: 0 }, { code: 1 }, { code: 2 }]
const statusOf = (code: number) => statuses[code] ?? { code }

/**
 * The spans of an OTLP/JSON batch in the shape `ProtobufTraceSerializer` reads (the batch's
 * resource converted once per resource object, which `OtlpTracer` keeps for its life).
 *
 * @since 0.1.0
 * @category encoding
 */
export const toReadableSpans = (data: JsonTraces): Array<ReadableSpan> => {
  const out: Array<ReadableSpan> = []
  for (const rs of data.resourceSpans) {
    let resource = resources.get(rs.resource)
    if (resource === undefined) {
      resource = resourceFromAttributes(attributesOf(rs.resource.attributes))
      resources.set(rs.resource, resource)
    }
    for (const ss of rs.scopeSpans) {
      const scope = ss.scope.version === undefined
        ? { name: ss.scope.name }
        : { name: ss.scope.name, version: ss.scope.version }
      for (const span of ss.spans) {
        const context: SpanContext = { traceId: span.traceId, spanId: span.spanId, traceFlags: SAMPLED }
        const startTime = hrTime(span.startTimeUnixNano)
        const endTime = hrTime(span.endTimeUnixNano)
        // most spans have no link and no event: one shared empty list, not two arrays a span
        const links: ReadonlyArray<Link> = span.links.length === 0 ? none : span.links.map((link) => ({
          context: { traceId: link.traceId, spanId: link.spanId, traceFlags: SAMPLED },
          attributes: attributesOf(link.attributes),
          droppedAttributesCount: 0
        }))
        out.push({
          name: span.name,
          kind: spanKind(span.kind),
          spanContext: () => context,
          // read as `parentSpanContext?.spanId`: absent and undefined are alike to the serializer
          parentSpanContext: (span.parentSpanId === undefined
            ? undefined
            : { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: SAMPLED }) as SpanContext,
          startTime,
          endTime,
          duration: [endTime[0] - startTime[0], endTime[1] - startTime[1]],
          ended: true,
          status: span.status.message === undefined
            ? statusOf(span.status.code)
            : { code: span.status.code, message: span.status.message },
          attributes: attributesOf(span.attributes),
          links: links as Array<Link>,
          events: span.events.length === 0 ? none as Array<never> : span.events.map((event) => ({
            name: event.name,
            time: hrTime(event.timeUnixNano),
            attributes: attributesOf(event.attributes),
            droppedAttributesCount: 0
          })),
          resource,
          instrumentationScope: scope,
          droppedAttributesCount: 0,
          droppedEventsCount: 0,
          droppedLinksCount: 0
        })
      }
    }
  }
  return out
}

/**
 * An OTLP/JSON trace batch as an `ExportTraceServiceRequest` in protobuf.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeTraces = (data: unknown): Uint8Array =>
  ProtobufTraceSerializer.serializeRequest(isJsonTraces(data) ? toReadableSpans(data) : []) ?? new Uint8Array(0)

/**
 * `OtlpSerialization` in protobuf: traces by {@link encodeTraces}, metrics and logs as
 * `@effect/opentelemetry` encodes them.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<OtlpSerialization.OtlpSerialization> = Layer.effect(
  OtlpSerialization.OtlpSerialization,
  Effect.map(OtlpSerialization.OtlpSerialization, (base) =>
    OtlpSerialization.OtlpSerialization.of({
      ...base,
      traces: (data) => HttpBody.uint8Array(encodeTraces(data), "application/x-protobuf")
    }))
).pipe(Layer.provide(OtlpSerialization.layerProtobuf))
