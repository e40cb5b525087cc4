/**
 * Traces sent to a test's OTLP receiver (`support/Receiver.ts`): the tracer layer of `Tracing.ts`
 * posting to the receiver's `/v1/traces`, every span sampled, in one batch when the layer closes
 * (the periodic export is an hour away, so none is cut in flight).
 */
import { Tracing } from "@tracebridge/http"

/**
 * `Tracing.layerWith` for `collector`, in `protocol`, with `resourceAttributes` on the resource.
 */
export const tracesTo = (
  collector: { readonly url: string },
  protocol: "http/json" | "http/protobuf" = "http/json",
  resourceAttributes: Readonly<Record<string, string>> = {}
) =>
  Tracing.layerWith({
    url: collector.url.replace(/\/hooks$/, "/v1/traces"),
    protocol,
    serviceName: "tracebridge-test",
    resourceAttributes,
    sampler: "parentbased_always_on",
    ratio: 1
  }, "1 hour")
