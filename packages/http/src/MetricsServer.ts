/**
 * Where the metrics (`Metrics.ts`) are read: Prometheus text at `GET /metrics`, through the
 * `@effect/opentelemetry` bridge (Effect's `Metric`s into an OpenTelemetry `MetricReader`, the
 * `PrometheusExporter` of `@opentelemetry/exporter-prometheus`, which never opens a port of its own
 * here), and optionally pushed over OTLP.
 *
 * | variable | default | what |
 * |---|---|---|
 * | `TRACEBRIDGE_METRICS_PORT` | none | serve `GET /metrics` on this port, a listener of its own (no token) |
 * | `TRACEBRIDGE_METRICS_HOST` | `HOST` (127.0.0.1) | the interface of that listener |
 * | `TRACEBRIDGE_METRICS_TOKEN` | none | serve `GET /metrics` on the main port, to `Authorization: Bearer <token>` only (401 otherwise) |
 * | `TRACEBRIDGE_METRICS_OTLP` | false | also push the metrics over OTLP/HTTP to `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/metrics`, every `OTEL_METRIC_EXPORT_INTERVAL` ms (60000), as `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL` or `OTEL_EXPORTER_OTLP_PROTOCOL` says (`http/protobuf`, the default, or `http/json`) |
 *
 * With none of them set there are no metrics at all: no endpoint (`/metrics` is a 404 like any
 * unknown path), no meter provider, no middleware, no recording. Each scrape runs one bounded
 * read of the database for the gauges (`MetricsStore`), never one per request.
 *
 * @since 0.1.0
 */
import * as OtelMetrics from "@effect/opentelemetry/Metrics"
import * as OtlpMetrics from "@effect/opentelemetry/OtlpMetrics"
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtelResource from "@effect/opentelemetry/Resource"
import type { HttpApp } from "@effect/platform"
import {
  FetchHttpClient,
  HttpApiBuilder,
  HttpRouter,
  HttpServer,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import { SyncStore } from "@tracebridge/sync"
import { Clock, Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { createServer } from "node:http"
import * as Errors from "./Errors.js"
import * as Metrics from "./Metrics.js"
import { MetricsStore } from "./persistence/MetricsStore.js"
import type { MigrationState } from "./persistence/MigrationState.js"
import type { Transactions } from "./persistence/Transactions.js"
import * as Readiness from "./Readiness.js"
import * as Tracing from "./Tracing.js"

/**
 * How the metrics are served; nothing set: off.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  readonly port: Option.Option<number>
  readonly host: string
  readonly token: Option.Option<Redacted.Redacted<string>>
  /** The OTLP metrics URL, when `TRACEBRIDGE_METRICS_OTLP=true` and an endpoint is set. */
  readonly otlp: Option.Option<string>
  readonly otlpInterval: number
  /** `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL` (default `http/protobuf`). */
  readonly otlpProtocol: "http/json" | "http/protobuf"
}

/**
 * The settings, off: no endpoint, no recording.
 *
 * @since 0.1.0
 * @category constructors
 */
export const off: Settings = {
  port: Option.none(),
  host: "127.0.0.1",
  token: Option.none(),
  otlp: Option.none(),
  otlpInterval: 60_000,
  otlpProtocol: "http/protobuf"
}

/**
 * The settings from the environment (see the module's table).
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<Settings> = Config.all({
  port: Config.option(Config.port("TRACEBRIDGE_METRICS_PORT")),
  host: Config.string("TRACEBRIDGE_METRICS_HOST").pipe(
    Config.orElse(() => Config.string("HOST")),
    Config.withDefault("127.0.0.1")
  ),
  token: Config.option(
    Config.redacted("TRACEBRIDGE_METRICS_TOKEN").pipe(
      Config.validate({
        message: "TRACEBRIDGE_METRICS_TOKEN must be at least 16 characters",
        validation: (t) => Redacted.value(t).length >= 16
      })
    )
  ),
  otlpOn: Config.boolean("TRACEBRIDGE_METRICS_OTLP").pipe(Config.withDefault(false)),
  metricsEndpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")),
  endpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT")),
  otlpInterval: Config.integer("OTEL_METRIC_EXPORT_INTERVAL").pipe(Config.withDefault(60_000)),
  otlpProtocol: Tracing.protocolOf("METRICS")
}).pipe(Config.map(({ endpoint, metricsEndpoint, otlpInterval, otlpOn, ...rest }) => ({
  ...rest,
  otlpInterval,
  otlp: !otlpOn ? Option.none() : Option.orElse(
    metricsEndpoint,
    () => Option.map(endpoint, (url) => `${url.replace(/\/+$/, "")}/v1/metrics`)
  )
})))

/**
 * Whether anything reads the metrics (then they are recorded).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isEnabled = (settings: Settings): boolean =>
  Option.isSome(settings.port) || Option.isSome(settings.token) || Option.isSome(settings.otlp)

const serializer = new PrometheusSerializer(undefined, false, undefined, false, true)

/**
 * The metrics as Prometheus reads them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Scraper {
  /** The Prometheus text of every metric, after the scrape's gauges are set (one database read). */
  readonly scrape: Effect.Effect<string>
}

/**
 * @since 0.1.0
 * @category tags
 */
export const Scraper = Context.GenericTag<Scraper>("@tracebridge/http/MetricsServer/Scraper")

const response = Effect.map(
  Effect.flatMap(Scraper, (scraper) => scraper.scrape),
  (text) => HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4; charset=utf-8" })
)

/**
 * The scraper over a Prometheus reader (the exporter without its own server) fed by the bridge.
 */
const scraperLive = Layer.scoped(
  Scraper,
  Effect.gen(function*() {
    const store = yield* MetricsStore
    const context = yield* Effect.context<Readiness.Readiness | Transactions | MigrationState>()
    const exporter = new PrometheusExporter({ preventServerStart: true })
    const producer = yield* OtelMetrics.makeProducer
    yield* OtelMetrics.registerProducer(producer, () => exporter)
    return {
      scrape: Effect.gen(function*() {
        // readiness as /readyz answers it now (a bounded probe of the database, once per scrape)
        const notReady = yield* Readiness.check.pipe(Effect.provide(context))
        Metrics.recordSnapshot(yield* store.snapshot, yield* Clock.currentTimeMillis, Option.isNone(notReady))
        const { resourceMetrics } = yield* Effect.promise(() => exporter.collect())
        return serializer.serialize(resourceMetrics)
      })
    }
  })
).pipe(Layer.provide(OtelResource.layer({ serviceName: "tracebridge" })))

const digest = (s: string) => createHash("sha256").update(s).digest()

/**
 * Whether an `Authorization` header carries the token (compared in constant time: both sides are
 * hashed first, so neither length nor content leaks through the time taken).
 *
 * @since 0.1.0
 * @category auth
 */
export const authorized = (header: string | undefined, token: Redacted.Redacted<string>): boolean => {
  if (header === undefined || header.slice(0, 7).toLowerCase() !== "bearer ") return false
  return timingSafeEqual(digest(header.slice(7)), digest(Redacted.value(token)))
}

/**
 * `GET /metrics` on the main port, behind the bearer token (none: no route, a 404).
 *
 * @since 0.1.0
 * @category layers
 */
export const route = (settings: Settings) =>
  Option.match(settings.token, {
    onNone: () => Layer.empty,
    onSome: (token) =>
      HttpApiBuilder.Router.use((router) =>
        Effect.flatMap(Scraper, (scraper) =>
          router.get(
            "/metrics",
            Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
              authorized(request.headers.authorization, token)
                ? Effect.provideService(response, Scraper, scraper)
                : Errors.fail("authentication_error", "unauthorized", "The metrics need the metrics bearer token"))
          ))
      )
  })

/** The listener of its own (`TRACEBRIDGE_METRICS_PORT`): `/metrics` only, anything else a 404. */
const listener = (port: number, host: string) =>
  HttpServer.serve(
    HttpRouter.empty.pipe(HttpRouter.get("/metrics", response))
  ).pipe(
    Layer.provide(NodeHttpServer.layer(() => createServer(), { port, host })),
    Layer.tap(() => Effect.logInfo(`Tracebridge metrics on http://${host}:${port}/metrics`)),
    Layer.orDie
  )

/**
 * The metrics: recording on, the OpenTelemetry bridge, the listener and the OTLP push as
 * configured; nothing when off.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  settings: Settings
): Layer.Layer<Scraper, never, MetricsStore | Readiness.Readiness | Transactions | MigrationState> => {
  if (!isEnabled(settings)) return Layer.succeed(Scraper, { scrape: Effect.succeed("") })
  const recording = Layer.scopedDiscard(Effect.acquireRelease(
    Effect.sync(() => Metrics.start()),
    (stop) => Effect.sync(stop)
  ))
  const otlp = Option.match(settings.otlp, {
    onNone: () => Layer.empty,
    onSome: (url) =>
      OtlpMetrics.layer({ url, resource: { serviceName: "tracebridge" }, exportInterval: settings.otlpInterval }).pipe(
        Layer.provide(
          settings.otlpProtocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf
        ),
        Layer.provide(FetchHttpClient.layer)
      )
  })
  const own = Option.match(settings.port, {
    onNone: () => Layer.empty,
    onSome: (port) => listener(port, settings.host)
  })
  return Layer.mergeAll(otlp, own).pipe(
    Layer.provideMerge(scraperLive),
    Layer.provideMerge(recording)
  )
}

/**
 * The server's middleware with the HTTP metrics around it when they are on (unchanged when off).
 *
 * @since 0.1.0
 * @category middleware
 */
export const middleware = (
  settings: Settings,
  inner: <E, R>(app: HttpApp.Default<E, R>) => HttpApp.Default<E, R>
): <E, R>(app: HttpApp.Default<E, R>) => HttpApp.Default<E, R> =>
  isEnabled(settings) ? (app) => Metrics.http(inner(app)) : inner

/**
 * The sync store, counting pages, failures and takeovers when the metrics are on.
 *
 * @since 0.1.0
 * @category layers
 */
export const syncStore = (
  settings: Settings
): Layer.Layer<SyncStore.SyncStore, never, SyncStore.SyncStore> =>
  Layer.effect(
    SyncStore.SyncStore,
    isEnabled(settings) ? Effect.map(SyncStore.SyncStore, Metrics.syncStore) : SyncStore.SyncStore
  )
