/**
 * Traces over OTLP/HTTP (issue #32), on only when an endpoint is configured by the standard
 * OpenTelemetry variables; otherwise nothing changes and nothing is paid (the server span stays
 * disabled, `Http.Options.tracing`).
 *
 * | variable | default | what |
 * |---|---|---|
 * | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` | none | the full URL spans are posted to (e.g. `http://collector:4318/v1/traces`) |
 * | `OTEL_EXPORTER_OTLP_ENDPOINT` | none | the collector's base URL; spans go to `<base>/v1/traces` |
 * | `OTEL_EXPORTER_OTLP_PROTOCOL` (or `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`) | `http/protobuf` | `http/protobuf` or `http/json`; anything else fails start-up |
 * | `OTEL_SERVICE_NAME` | `tracebridge` | the resource's `service.name` |
 * | `OTEL_RESOURCE_ATTRIBUTES` | none | `key=value,key=value` resource attributes |
 * | `OTEL_TRACES_SAMPLER` | `parentbased_always_on` | `always_on`, `always_off`, `traceidratio`, `parentbased_always_on`, `parentbased_always_off`, `parentbased_traceidratio` |
 * | `OTEL_TRACES_SAMPLER_ARG` | 1 | the ratio of the `*traceidratio` samplers, 0 to 1 |
 * | `OTEL_SDK_DISABLED` | false | `true`: no traces even with an endpoint |
 *
 * The spans are Effect's (`Effect.withSpan`, `HttpMiddleware`'s server span, `HttpClient`'s client
 * spans, `@effect/sql`'s `sql.execute`), exported by `@effect/opentelemetry`'s `OtlpTracer` over
 * Effect's `HttpClient`. The tracer here wraps it with the sampler and an attribute policy: no
 * query string, no header and no userinfo leaves the process, an error's message is redacted
 * (`Redact.text`), the server span is renamed `<METHOD> <route template>` once the router has
 * matched, and it carries `tracebridge.request_id` (the `X-Request-Id` it answered).
 *
 * @since 0.1.0
 */
import { OtlpSerialization, OtlpTracer } from "@effect/opentelemetry"
import type { HttpApp, HttpServerResponse } from "@effect/platform"
import { FetchHttpClient, HttpServerError, HttpServerRequest, HttpTraceContext } from "@effect/platform"
import type { Duration } from "effect"
import { Cause, Config, ConfigError, Context, Effect, Either, Exit, FiberRef, Layer, Option, Tracer } from "effect"
import * as OtlpProtobuf from "./OtlpProtobuf.js"
import * as Redact from "./Redact.js"

/**
 * The samplers of `OTEL_TRACES_SAMPLER` this process understands.
 *
 * @since 0.1.0
 * @category models
 */
export type SamplerName =
  | "always_on"
  | "always_off"
  | "traceidratio"
  | "parentbased_always_on"
  | "parentbased_always_off"
  | "parentbased_traceidratio"

const samplerNames: ReadonlyArray<SamplerName> = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio"
]

/**
 * Tracing as configured: `None` when no endpoint is set or `OTEL_SDK_DISABLED=true`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  /** Where spans are posted (the traces URL, `.../v1/traces`). */
  readonly url: string
  readonly protocol: "http/json" | "http/protobuf"
  readonly serviceName: string
  readonly resourceAttributes: Readonly<Record<string, string>>
  readonly sampler: SamplerName
  readonly ratio: number
}

const optionalString = (name: string) => Config.option(Config.nonEmptyString(name))

/** `key=value,key=value` (values percent-decoded, as the specification says). */
const parseResourceAttributes = (raw: string): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const pair of raw.split(",")) {
    const at = pair.indexOf("=")
    if (at <= 0) continue
    const key = pair.slice(0, at).trim()
    const value = pair.slice(at + 1).trim()
    try {
      out[key] = decodeURIComponent(value)
    } catch {
      out[key] = value
    }
  }
  return out
}

/**
 * The OTLP protocol of a signal: `OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL`, else
 * `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf` (the specification's default). Anything but
 * `http/protobuf` or `http/json` fails, naming the variable (gRPC is not supported).
 *
 * @since 0.1.0
 * @category config
 */
export const protocolOf = (signal: "TRACES" | "METRICS"): Config.Config<"http/json" | "http/protobuf"> =>
  Config.string(`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`).pipe(
    Config.orElse(() => Config.string("OTEL_EXPORTER_OTLP_PROTOCOL")),
    Config.withDefault("http/protobuf"),
    Config.mapOrFail((raw) =>
      raw === "http/json" || raw === "http/protobuf"
        ? Either.right(raw)
        : Either.left(ConfigError.InvalidData(
          ["OTEL_EXPORTER_OTLP_PROTOCOL"],
          `unsupported OTLP protocol "${raw}": use http/protobuf or http/json (grpc is not supported)`
        ))
    )
  )

/**
 * Reads the `OTEL_*` variables. Fails (start-up fails) on an unsupported protocol or sampler, or a
 * ratio outside 0 to 1.
 *
 * @since 0.1.0
 * @category config
 */
export const settings: Effect.Effect<Option.Option<Settings>, ConfigError.ConfigError> = Effect.gen(function*() {
  const disabled = yield* Config.boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false))
  const traces = yield* optionalString("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
  const base = yield* optionalString("OTEL_EXPORTER_OTLP_ENDPOINT")
  if (disabled || (Option.isNone(traces) && Option.isNone(base))) return Option.none()
  const url = Option.isSome(traces) ? traces.value : `${base.pipe(Option.getOrThrow).replace(/\/+$/, "")}/v1/traces`
  const protocolRaw = yield* protocolOf("TRACES")
  const serviceName = yield* Config.nonEmptyString("OTEL_SERVICE_NAME").pipe(Config.withDefault("tracebridge"))
  const resourceRaw = yield* Config.string("OTEL_RESOURCE_ATTRIBUTES").pipe(Config.withDefault(""))
  const samplerRaw = yield* Config.string("OTEL_TRACES_SAMPLER").pipe(Config.withDefault("parentbased_always_on"))
  if (!(samplerNames as ReadonlyArray<string>).includes(samplerRaw)) {
    return yield* Effect.fail(ConfigError.InvalidData(
      ["OTEL_TRACES_SAMPLER"],
      `unsupported sampler "${samplerRaw}": use one of ${samplerNames.join(", ")}`
    ))
  }
  const ratio = yield* Config.number("OTEL_TRACES_SAMPLER_ARG").pipe(
    Config.validate({
      message: "OTEL_TRACES_SAMPLER_ARG must be between 0 and 1",
      validation: (n) => n >= 0 && n <= 1
    }),
    Config.withDefault(1)
  )
  return Option.some<Settings>({
    url,
    protocol: protocolRaw,
    serviceName,
    resourceAttributes: parseResourceAttributes(resourceRaw),
    sampler: samplerRaw as SamplerName,
    ratio
  })
})

/**
 * Whether traces are on (an endpoint is configured and the SDK not disabled).
 *
 * @since 0.1.0
 * @category config
 */
export const enabled: Effect.Effect<boolean, ConfigError.ConfigError> = Effect.map(settings, Option.isSome)

/** The trace id's low 32 bits as a fraction of 2^32, for the ratio samplers. */
const traceFraction = (traceId: string): number => {
  const low = Number.parseInt(traceId.slice(-8), 16)
  return Number.isNaN(low) ? 0 : low / 0x1_0000_0000
}

/**
 * Whether a new span is recorded, per the sampler (a parent-based sampler follows the parent's
 * decision, including a caller's `traceparent` flags; a ratio sampler keeps a trace whose id's low
 * 32 bits fall under the ratio, so every node decides alike for a trace it joins).
 *
 * @since 0.1.0
 * @category sampling
 */
export const sample = (
  sampler: SamplerName,
  ratio: number,
  parent: Option.Option<Tracer.AnySpan>,
  traceId: string
): boolean => {
  if (sampler.startsWith("parentbased_") && Option.isSome(parent)) return parent.value.sampled
  switch (sampler) {
    case "always_on":
    case "parentbased_always_on":
      return true
    case "always_off":
    case "parentbased_always_off":
      return false
    default:
      return ratio >= 1 || traceFraction(traceId) < ratio
  }
}

const hex = (length: number): string => {
  let out = ""
  for (let i = 0; i < length; i++) out += "0123456789abcdef"[Math.floor(Math.random() * 16)]
  return out
}

/** A span that is not recorded: it carries ids (for `traceparent`) and drops everything else. */
const unsampledSpan = (
  name: string,
  parent: Option.Option<Tracer.AnySpan>,
  context: Tracer.Span["context"],
  links: ReadonlyArray<Tracer.SpanLink>,
  startTime: bigint,
  kind: Tracer.SpanKind,
  traceId: string
): Tracer.Span => {
  const span = {
    _tag: "Span" as const,
    name,
    spanId: hex(16),
    traceId,
    parent,
    context,
    status: { _tag: "Started" as const, startTime } as Tracer.SpanStatus,
    attributes: new Map<string, unknown>(),
    links,
    sampled: false,
    kind,
    end(endTime: bigint, exit: Exit.Exit<unknown, unknown>) {
      span.status = { _tag: "Ended", startTime, endTime, exit }
    },
    attribute() {},
    event() {},
    addLinks() {}
  }
  return span
}

/**
 * What an attribute becomes when it leaves the process: `undefined` drops it. No query string (it
 * can carry a key), no header, no userinfo.
 *
 * @since 0.1.0
 * @category policy
 */
export const exportedAttribute = (key: string, value: unknown): unknown => {
  if (key === "http.response.header.x-request-id") return value
  if (key === "url.query" || key.startsWith("http.request.header.") || key.startsWith("http.response.header.")) {
    return undefined
  }
  if (key === "url.full" && typeof value === "string") {
    try {
      const url = new URL(value)
      return `${url.protocol}//${url.host}${url.pathname}`
    } catch {
      return value.split("?")[0]
    }
  }
  return value
}

/** An error's name and redacted message, instead of the whole failure (which may hold a body). */
class SpanError extends Error {}

const redactedExit = (exit: Exit.Exit<unknown, unknown>): Exit.Exit<unknown, unknown> => {
  if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return exit
  const first = Cause.prettyErrors(exit.cause)[0]
  const error = new SpanError(Redact.text(first?.message ?? "failure"))
  error.name = first?.name ?? "Error"
  return Exit.fail(error)
}

/** Records an attribute as {@link exportedAttribute} lets it out; names a server span by its route. */
const policed = (
  span: Tracer.Span,
  attribute: (this: Tracer.Span, key: string, value: unknown) => void,
  key: string,
  value: unknown
): void => {
  const exported = exportedAttribute(key, value)
  if (exported === undefined) return
  // the id answered in `X-Request-Id` (the server span records the response's headers)
  if (key === "http.response.header.x-request-id") {
    if (span.kind === "server") attribute.call(span, "tracebridge.request_id", exported)
    return
  }
  if (key === "http.route" && span.kind === "server") {
    const method = span.attributes.get("http.request.method")
    ;(span as { name: string }).name = `${typeof method === "string" ? method : "HTTP"} ${String(value)}`
  }
  attribute.call(span, key, exported)
}

/** A span's `attribute`, for a span whose own is its prototype's. */
function policedAttribute(this: Tracer.Span, key: string, value: unknown): void {
  policed(this, (Object.getPrototypeOf(this) as Tracer.Span).attribute, key, value)
}

/** A span's `end`, for a span whose own is its prototype's: the exit redacted. */
function redactedEnd(this: Tracer.Span, endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
  ;(Object.getPrototypeOf(this) as Tracer.Span).end.call(this, endTime, redactedExit(exit))
}

/**
 * Wraps a tracer with the sampler and the attribute policy ({@link exportedAttribute}), and names a
 * server span `<METHOD> <route template>` when the router sets `http.route`. Its `context` (what
 * the fiber runtime calls around each step) is `runtime`'s: give the tracer it replaces, whose
 * context runs the step as `inner`'s does.
 *
 * @since 0.1.0
 * @category constructors
 */
export const wrap = (
  inner: Tracer.Tracer,
  sampler: SamplerName,
  ratio: number,
  runtime: Tracer.Tracer = inner
): Tracer.Tracer => {
  const always = sampler === "always_on" || ((sampler === "traceidratio") && ratio >= 1)
  return Tracer.make({
    span(name, parent, context, links, startTime, kind, options) {
      // A root span's id is drawn by the inner tracer: a ratio decision for it is a fresh draw.
      const sampled = always
        ? true
        : Option.isSome(parent)
        ? sample(sampler, ratio, parent, parent.value.traceId)
        : sampler.endsWith("traceidratio")
        ? Math.random() < ratio
        : sample(sampler, ratio, parent, "")
      if (!sampled) {
        const traceId = Option.isSome(parent) ? parent.value.traceId : hex(32)
        return unsampledSpan(name, parent, context, links, startTime, kind, traceId)
      }
      const span = inner.span(name, parent, context, links, startTime, kind, options)
      if (Object.hasOwn(span, "attribute") || Object.hasOwn(span, "end")) {
        // methods of its own (not a prototype's): wrap them in closures
        const attribute = span.attribute.bind(span)
        const end = span.end.bind(span)
        span.attribute = (key, value) => policed(span, attribute, key, value)
        span.end = (endTime, exit) => end(endTime, redactedExit(exit))
        return span
      }
      // the usual case (`OtlpTracer`'s spans share a prototype): two shared functions, nothing per span
      span.attribute = policedAttribute
      span.end = redactedEnd
      return span
    },
    // The fiber runtime calls this around every step of every fiber. `runtime`'s (Effect's own
    // tracer's, where the layer sets this one) keeps that call site seeing one function, as it does
    // with traces off; `OtlpTracer`'s is another function doing the same (`f()`).
    context: runtime.context
  })
}

/** True where {@link layerWith}'s tracer is set: a span's ids then name a span a collector has. */
const exporting: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/**
 * The current span as a W3C `traceparent` (`00-<trace>-<span>-01`), when traces are exported and
 * the span is sampled; otherwise none (with traces off, spans are Effect's own and name nothing a
 * collector has). Kept with what the span caused, e.g. a webhook event, so that later work can
 * link back to it ({@link linkTo}).
 *
 * @since 0.1.0
 * @category links
 */
export const currentTraceparent: Effect.Effect<Option.Option<string>> = Effect.flatMap(
  FiberRef.get(exporting),
  (on) =>
    on
      ? Effect.map(Effect.option(Effect.currentSpan), (span) =>
        Option.isSome(span) && span.value.sampled
          ? Option.some(`00-${span.value.traceId}-${span.value.spanId}-01`)
          : Option.none())
      : Effect.succeedNone
)

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/**
 * Links the current span to the span a `traceparent` names (what caused this work, e.g. the
 * request or the sync poll that queued a webhook event), with `tracebridge.link` = `reason`.
 * Nothing when there is no current span or the value is not a `traceparent`.
 *
 * @since 0.1.0
 * @category links
 */
export const linkTo = (traceparent: string | null | undefined, reason: string): Effect.Effect<void> => {
  const m = traceparent === null || traceparent === undefined ? null : TRACEPARENT.exec(traceparent)
  if (m === null) return Effect.void
  return Effect.flatMap(Effect.option(Effect.currentSpan), (span) =>
    Effect.sync(() => {
      if (Option.isNone(span)) return
      span.value.addLinks([{
        _tag: "SpanLink",
        span: Tracer.externalSpan({ traceId: m[1]!, spanId: m[2]!, sampled: m[3] === "01" }),
        attributes: { "tracebridge.link": reason }
      }])
    }))
}

/**
 * Sets a tracer exporting over OTLP/HTTP to `settings.url`, with the sampler and attribute policy
 * of {@link wrap}: a batch every `exportInterval` (or of 1,000 spans), and what is left when the
 * layer closes (a batch still in flight then is dropped: `OtlpTracer` interrupts it).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (s: Settings, exportInterval: Duration.DurationInput = "1 second"): Layer.Layer<never> =>
  Layer.unwrapScoped(
    Effect.zipWith(
      OtlpTracer.make({
        url: s.url,
        resource: { serviceName: s.serviceName, attributes: s.resourceAttributes },
        exportInterval
      }),
      // the tracer this one replaces (Effect's own, unless something set another)
      Effect.tracer,
      (tracer, replaced) =>
        Layer.merge(Layer.setTracer(wrap(tracer, s.sampler, s.ratio, replaced)), Layer.locallyScoped(exporting, true))
    )
  ).pipe(
    Layer.provide(s.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpProtobuf.layer),
    Layer.provide(FetchHttpClient.layer)
  )

/**
 * Sets the OTLP tracer when configured ({@link settings}). Otherwise it turns Effect's tracer off
 * for what it is provided to (the workers: the sync, the webhook poller and dispatcher), as the
 * requests already run: a span that nothing exports is made, timed, given a stack trace and
 * dropped, at every SQL statement and port call (issue #35: docs/performance.md, row 14).
 * Fails on an unsupported `OTEL_EXPORTER_OTLP_PROTOCOL` or `OTEL_TRACES_SAMPLER`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(settings, Option.match({ onNone: () => Layer.setTracerEnabled(false), onSome: layerWith }))
)

/**
 * What the server span's end reports besides the span: the request's method and URL, the answer's
 * status and the seconds it took (the HTTP metrics, `Metrics.recordHttp`, when they are on too).
 *
 * @since 0.1.0
 * @category middleware
 */
export type OnResponse = (method: string, url: string, status: number, seconds: number) => void

/**
 * The server span of a request, for when traces are on (the platform's own, `HttpMiddleware.tracer`,
 * stays disabled: it parses the URL and sets every request and response header as an attribute,
 * which costs more than this). A child of the caller's `traceparent`; the router sets `http.route`
 * on it (then {@link wrap} renames it `<METHOD> <route template>`); it records the status and
 * `tracebridge.request_id`. It carries the route template, not the raw path (which holds ids): only
 * a request that matched no route keeps its path (`url.path`, without the query), to say what was
 * asked.
 *
 * One exit handler ends the span and calls `onResponse` (the HTTP metrics, when they are on too, so
 * that a request is not wrapped twice).
 *
 * @since 0.1.0
 * @category middleware
 */
export const serverSpan = <E, R>(app: HttpApp.Default<E, R>, onResponse?: OnResponse): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.flatMap(
      Effect.makeSpan(`http.server ${request.method}`, {
        kind: "server",
        captureStackTrace: false,
        parent: Option.getOrUndefined(HttpTraceContext.fromHeaders(request.headers))
      }),
      (span) => {
        const started = onResponse === undefined ? 0 : performance.now()
        span.attribute("http.request.method", request.method)
        const end = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, E>) =>
          Effect.clockWith((clock) =>
            Effect.sync(() => {
              const response = HttpServerError.exitResponse(exit)
              span.attribute("http.response.status_code", response.status)
              const id = response.headers["x-request-id"]
              if (id !== undefined) span.attribute("tracebridge.request_id", id)
              if (span.sampled && !span.attributes.has("http.route")) {
                const query = request.url.indexOf("?")
                span.attribute("url.path", query === -1 ? request.url : request.url.slice(0, query))
              }
              span.end(clock.unsafeCurrentTimeNanos(), exit)
              if (onResponse !== undefined) {
                onResponse(request.method, request.url, response.status, (performance.now() - started) / 1000)
              }
            })
          )
        // A request that is not sampled records nothing below it: its spans are Effect's no-op spans.
        if (!span.sampled) return Effect.onExit(Effect.withTracerEnabled(app, false), end)
        // The span is the parent of the request's spans: set in the request fiber's context, and the
        // context put back at the end. (`Effect.withParentSpan` does the same through
        // `fiberRefLocally`, an `acquireUseRelease`: more steps on every request; bench row 10.)
        return Effect.flatMap(
          FiberRef.getAndUpdate(FiberRef.currentContext, (context) => Context.add(context, Tracer.ParentSpan, span)),
          (outer) =>
            Effect.onExit(app, (exit) => Effect.zipRight(FiberRef.set(FiberRef.currentContext, outer), end(exit)))
        )
      }
    ))
