/**
 * The served API: the contract's handlers, the request-id and error middleware, the OpenAPI
 * document at `/v1/openapi.json` and the offline docs page at `/docs`. The HTTP server is provided
 * by `main.ts` (or by tests); the stores (`Database.Persistence`) and the encryption key by the caller.
 *
 * @since 0.1.0
 */
import type { Etag, FileSystem, HttpApiError, HttpPlatform, HttpServer, Path } from "@effect/platform"
import {
  HttpApiBuilder,
  HttpApp,
  HttpClient,
  HttpMiddleware,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Api } from "@tracebridge/api/Api"
import { Authentication } from "@tracebridge/api/Security"
import type { Jobs, Polls } from "@tracebridge/sync"
import type { DefaultServices } from "effect"
import { Duration, Effect, Exit, FiberRef, Layer, Option, Redacted } from "effect"
import * as AppConfig from "./AppConfig.js"
import * as ConnectPages from "./connect/Pages.js"
import * as DecodeMessages from "./DecodeMessages.js"
import * as DocsRoute from "./docs/Route.js"
import * as Errors from "./Errors.js"
import { HttpConnectLive } from "./handlers/ConnectHttp.js"
import { HttpConnectionsLive } from "./handlers/ConnectionsHttp.js"
import * as DashboardHttp from "./handlers/DashboardHttp.js"
import { HttpEventsLive } from "./handlers/EventsHttp.js"
import { HttpLinkLive } from "./handlers/LinkHttp.js"
import { HttpOAuthLive } from "./handlers/OAuthHttp.js"
import { HttpProvidersLive } from "./handlers/ProvidersHttp.js"
import { HttpResourcesLive } from "./handlers/ResourcesHttp.js"
import { HttpSandboxLive } from "./handlers/SandboxHttp.js"
import { HttpSyncLive } from "./handlers/SyncHttp.js"
import { HttpSystemLive } from "./handlers/SystemHttp.js"
import { HttpWebhooksLive } from "./handlers/WebhooksHttp.js"
import * as Idempotency from "./Idempotency.js"
import * as Limits from "./Limits.js"
import * as McpRoute from "./McpRoute.js"
import * as Metrics from "./Metrics.js"
import * as MetricsServer from "./MetricsServer.js"
import * as OpenApiRoute from "./OpenApiRoute.js"
import { isUnavailable, type Persistence } from "./persistence/Database.js"
import { IdempotencyStore } from "./persistence/IdempotencyStore.js"
import * as RowCache from "./persistence/RowCache.js"
import * as RateLimit from "./RateLimit.js"
import * as Readiness from "./Readiness.js"
import * as RequestId from "./RequestId.js"
import * as RequestLog from "./RequestLog.js"
import * as RequestLogCapture from "./RequestLogCapture.js"
import * as Routes from "./Routes.js"
import * as Auth from "./services/Auth.js"
import * as Connections from "./services/Connections.js"
import { Crypto } from "./services/Crypto.js"
import * as Events from "./services/Events.js"
import * as ManagedSync from "./services/ManagedSync.js"
import * as Providers from "./services/Providers.js"
import * as RequestLogService from "./services/RequestLog.js"
import * as UrlGuard from "./services/UrlGuard.js"
import * as WebhookDispatcher from "./services/WebhookDispatcher.js"
import * as WebhookPoller from "./services/WebhookPoller.js"
import * as Webhooks from "./services/Webhooks.js"
import * as Tracing from "./Tracing.js"
import * as WebhookConfig from "./WebhookConfig.js"

/**
 * The bearer token's authentication, done once per request by the request middleware (the rate
 * limit is keyed by its client) and reused by the security middleware.
 */
const authenticated = FiberRef.unsafeMake<
  { readonly token: string; readonly exit: Exit.Exit<Auth.Principal, Errors.AuthenticationError> } | undefined
>(undefined)

const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(Auth.Auth, (auth) =>
    Authentication.of({
      bearer: (token) =>
        Effect.flatMap(FiberRef.get(authenticated), (cached) =>
          cached !== undefined && cached.token === Redacted.value(token)
            ? cached.exit
            : auth.authenticate(Redacted.value(token)))
    }))
)

/** The bearer token as the security middleware reads it (`Authorization: Bearer …`). */
const bearerOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const header = request.headers.authorization
  return header !== undefined && header.slice(0, 7).toLowerCase() === "bearer " ? header.slice(7) : undefined
}

/**
 * The rate-limit key: the API client of an access token, the organisation of a connection token
 * (it has no client), else the remote address (the token endpoint, a missing or bad token).
 */
const rateKeyOf = (
  request: HttpServerRequest.HttpServerRequest,
  exit: Exit.Exit<Auth.Principal, unknown> | undefined
): string => {
  if (exit !== undefined && Exit.isSuccess(exit)) {
    const principal = exit.value
    return principal.kind === "access" && principal.client_id !== null
      ? `client:${principal.client_id}`
      : `org:${principal.organisation.id}`
  }
  return `ip:${Option.getOrElse(request.remoteAddress, () => "unknown")}`
}

const limitsRefusal = (refusal: Limits.Refusal): Effect.Effect<Errors.HttpError> => {
  switch (refusal._tag) {
    case "TooLarge":
      return Errors.payloadTooLarge(`The body is larger than ${Limits.MAX_BODY_BYTES} bytes (1 MiB)`)
    case "UnsupportedMediaType":
      return Errors.unsupportedMediaType(
        `Content-Type ${refusal.contentType} is not accepted here; send application/json`
      )
    case "StringTooLong":
      return Errors.make(
        "validation_error",
        "invalid_parameter",
        `A string is longer than ${Limits.MAX_STRING_LENGTH} characters`,
        refusal.path === "" ? undefined : refusal.path
      )
    case "TooDeep":
      return Errors.make(
        "validation_error",
        "invalid_json",
        `The body is nested deeper than ${Limits.MAX_DEPTH} levels`
      )
  }
}

/**
 * Every request gets an id (in `X-Request-Id`, `meta` and errors); a request that fails its schema
 * is a 400 `validation_error` naming the parameter, never the framework's default body; a defect is
 * a 500 `api_error` with no stack.
 */
const RequestMiddleware = HttpApiBuilder.middleware(
  Api,
  Effect.gen(function*() {
    const limiter = yield* RateLimit.RateLimiter
    const auth = yield* Auth.Auth
    const idempotencyKeys = yield* IdempotencyStore
    const crypto = yield* Crypto
    return (app: HttpApp.Default) => requestMiddleware(app, limiter, auth, idempotencyKeys, crypto)
  })
)

const requestMiddleware = (
  app: HttpApp.Default,
  limiter: RateLimit.Service,
  auth: Auth.Service,
  idempotencyKeys: IdempotencyStore["Type"],
  crypto: Crypto["Type"]
) =>
  // one read of the Postgres row generation for the request's cached rows (`RowCache.perRequest`)
  RowCache.perRequest(Effect.gen(function*() {
    const id = RequestId.make()
    yield* HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "x-request-id", id))
    )
    const request = yield* HttpServerRequest.HttpServerRequest
    // The request log's record of this request, when it is logged (`RequestLogCapture.ts`).
    const logged = yield* FiberRef.get(RequestLogCapture.current)
    if (logged !== undefined) logged.requestId = id
    // Route failures reach this middleware before they are encoded (the types say never).
    const routed = app as unknown as Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
    const guarded = Effect.gen(function*() {
      const token = bearerOf(request)
      const exit = token === undefined ? undefined : yield* Effect.exit(auth.authenticate(token))
      if (logged !== undefined && exit !== undefined && Exit.isSuccess(exit)) {
        const principal = exit.value
        logged.organisationId = principal.organisation.id
        logged.principal = principal.kind === "connection"
          ? `connection:${principal.connection_id}`
          : principal.client_id ?? `organisation:${principal.organisation.id}`
      }
      if (limiter.enabled) {
        const decision = yield* limiter.take(rateKeyOf(request, exit))
        yield* HttpApp.appendPreResponseHandler((_request, response) =>
          Effect.succeed(HttpServerResponse.setHeaders(response, {
            "ratelimit-limit": String(decision.limit),
            "ratelimit-remaining": String(decision.remaining),
            "ratelimit-reset": String(decision.reset),
            ...(decision.allowed ? {} : { "retry-after": String(decision.retryAfter) })
          }))
        )
        if (!decision.allowed) {
          return yield* Errors.fail(
            "rate_limit_error",
            "rate_limited",
            `Too many requests; retry after ${decision.retryAfter} s`
          )
        }
      }
      const checked = yield* Effect.catchAll(Limits.check(request), (refusal) =>
        Effect.zipRight(
          refusal._tag === "TooLarge"
            ? HttpApp.appendPreResponseHandler((_request, response) =>
              Effect.succeed(HttpServerResponse.setHeader(response, "connection", "close"))
            )
            : Effect.void,
          Effect.flatMap(limitsRefusal(refusal), Effect.fail)
        ))
      if (logged !== undefined && checked !== request) {
        const text = yield* Effect.option(checked.text)
        if (Option.isSome(text)) logged.keepBody(text.value)
      }
      const run = Effect.provideService(routed, HttpServerRequest.HttpServerRequest, checked)
      const scope = exit !== undefined && Exit.isSuccess(exit) ? Idempotency.scopeOf(exit.value) : undefined
      return yield* Idempotency.handle(
        checked,
        scope,
        exit === undefined || token === undefined ? run : Effect.locally(run, authenticated, { token, exit }),
        idempotencyKeys,
        crypto
      )
    })
    return yield* guarded.pipe(
      Effect.catchIf(
        (e): e is HttpApiError.HttpApiDecodeError =>
          typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "HttpApiDecodeError",
        (e) => {
          const refused = DecodeMessages.refusal(e.issues)
          return Effect.flatMap(
            Errors.make("validation_error", refused.code, refused.message, refused.param),
            Effect.fail
          )
        }
      ),
      Effect.catchIf(
        (e): e is { readonly _tag: string; readonly reason?: string } =>
          typeof e === "object" && e !== null &&
          ((e as { _tag?: unknown })._tag === "RequestError" || (e as { _tag?: unknown })._tag === "RouteNotFound"),
        (e) => {
          const allowed = e._tag === "RouteNotFound" ? Routes.allowedMethods(request.url.split("?")[0]!) : []
          if (allowed.length > 0 && !allowed.includes(request.method)) {
            return Effect.flatMap(Errors.methodNotAllowed(request.method, allowed), Effect.fail)
          }
          return Effect.flatMap(
            (e._tag === "RouteNotFound"
              ? Errors.make("not_found_error", "resource_not_found", "No such endpoint; see /v1/openapi.json")
              : Errors.make("validation_error", "invalid_json", "The body is not valid JSON")) as Effect.Effect<
                Errors.HttpError
              >,
            Effect.fail
          )
        }
      ),
      Effect.catchAllDefect((defect) =>
        isBodyDecodeFailure(defect)
          ? Effect.flatMap(
            Errors.make("validation_error", "invalid_json", "The body is not valid JSON") as Effect.Effect<
              Errors.HttpError
            >,
            Effect.fail
          )
          : isUnavailable(defect)
          ? Effect.zipRight(
            Effect.logWarning("database unavailable").pipe(Effect.annotateLogs({ reason: reasonOf(defect) })),
            Effect.flatMap(Errors.serviceUnavailable, Effect.fail)
          )
          : Effect.zipRight(
            Effect.logError("unexpected failure", defect),
            Effect.flatMap(
              Errors.make("api_error", "internal_error", "Something went wrong on our side; quote the request id"),
              Effect.fail
            )
          )
      ),
      Effect.locally(RequestId.current, id),
      // every line logged while the request runs names it (issue #30)
      Effect.annotateLogs("request_id", id)
    ) as unknown as HttpServerResponse.HttpServerResponse
  }))

/** The innermost message of a defect, for one log line (an expected condition needs no stack). */
const reasonOf = (defect: unknown): string => {
  let message = String(defect)
  for (let e = defect, depth = 0; typeof e === "object" && e !== null && depth < 6; depth++) {
    const m = (e as { readonly message?: unknown }).message
    if (typeof m === "string" && m !== "") message = m
    e = (e as { readonly cause?: unknown }).cause
  }
  return message
}

/** A body that could not be read as JSON surfaces as a defect of the request decoder. */
const isBodyDecodeFailure = (defect: unknown): boolean => {
  if (defect instanceof SyntaxError) return true
  if (typeof defect !== "object" || defect === null) return false
  const d = defect as { readonly _tag?: unknown; readonly reason?: unknown; readonly cause?: unknown }
  return (d._tag === "RequestError" && d.reason === "Decode") ||
    (d.cause !== undefined && d.cause !== defect && isBodyDecodeFailure(d.cause))
}

/**
 * What the webhook machinery runs on; every field has a production default.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Where webhooks may go (default: the system resolver and the rules of DECISIONS). */
  readonly urlGuard?: Layer.Layer<UrlGuard.UrlGuard>
  /** The client deliveries go out through (default: fetch, never following redirects). */
  readonly deliveryClient?: Layer.Layer<HttpClient.HttpClient>
  /** Run the delivery worker and the production poller here (default: `TRACEBRIDGE_WEBHOOK_WORKER`, true). */
  readonly worker?: boolean
  /** The rate limiter (default: `RateLimit.layer`, configured by `TRACEBRIDGE_RATE_LIMIT_*`). */
  readonly rateLimiter?: Layer.Layer<RateLimit.RateLimiter>
  /** Log one successful response in this many (default: `TRACEBRIDGE_ACCESS_LOG_EVERY`, 100); errors always. */
  readonly accessLogEvery?: number
  /** A tracing span per request (default false: nothing exports traces). */
  readonly tracing?: boolean
  /** Where the metrics are served (default: `MetricsServer.config`, `TRACEBRIDGE_METRICS_*`; none: off). */
  readonly metrics?: MetricsServer.Settings
  /** The request log (default: `RequestLogCapture.config`, `TRACEBRIDGE_REQUEST_LOG*`). */
  readonly requestLog?: RequestLogCapture.Settings
}

/**
 * Deliveries go out through node:http with a keep-alive agent: it hands back a 3xx instead of
 * following it (a redirect could lead to an internal address), and costs far less per request than
 * fetch.
 */
const DeliveryClientLive = NodeHttpClient.layerWithoutAgent.pipe(
  Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: true }))
)

/**
 * Production organisations' deliveries: the same, with a DNS lookup that refuses any non-public
 * address when the socket connects (the guard's check before the attempt cannot see a name
 * rebound in between).
 */
const ProductionDeliveryClientLive = Layer.effect(
  WebhookDispatcher.ProductionDeliveryClient,
  HttpClient.HttpClient
).pipe(
  Layer.provide(NodeHttpClient.layerWithoutAgent),
  Layer.provide(
    NodeHttpClient.makeAgentLayer({ keepAlive: true, lookup: UrlGuard.guardedLookup("production") })
  )
)

const servicesLive = (options: Options) =>
  Layer.mergeAll(
    WebhookPoller.layer,
    Events.layer,
    Connections.layer,
    ManagedSync.WorkflowsLive.pipe(Layer.provide(Connections.layer)),
    ManagedSync.PollsLive.pipe(Layer.provide(Connections.layer))
  )
    .pipe(
      Layer.provideMerge(ManagedSync.JobsLive),
      Layer.provideMerge(Webhooks.layer),
      Layer.provideMerge(WebhookDispatcher.layer),
      Layer.provideMerge(options.urlGuard ?? UrlGuard.layer),
      Layer.provide(options.deliveryClient ?? DeliveryClientLive),
      Layer.provide(
        options.deliveryClient === undefined
          ? ProductionDeliveryClientLive
          : Layer.effect(WebhookDispatcher.ProductionDeliveryClient, HttpClient.HttpClient).pipe(
            Layer.provide(options.deliveryClient)
          )
      ),
      Layer.provideMerge(Auth.layer),
      Layer.provideMerge(Providers.layer),
      Layer.provideMerge(RequestLogService.layer)
    )

/** The request log's settings: the options', else the environment's. */
const requestLogSettings = (options: Options) =>
  options.requestLog === undefined ? Effect.orDie(RequestLogCapture.config) : Effect.succeed(options.requestLog)

/**
 * The request log's capture, queue and writer when it is on (nothing when off); its queue is written
 * out within the shutdown grace.
 */
const requestLogLive = (options: Options) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const settings = yield* requestLogSettings(options)
    if (!settings.enabled) return Layer.empty
    const { shutdownGrace } = yield* Effect.orDie(AppConfig.server)
    return RequestLogCapture.layer(settings, shutdownGrace)
  }))

/**
 * The delivery worker (woken when an event is queued, else every tick) and the production poller
 * (a pass every minute; each connection at most once per poll interval), as daemons of the layer.
 */
const workerLive = (options: Options) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const config = yield* WebhookConfig.worker.pipe(Effect.orDie)
    if (!(options.worker ?? config.enabled)) return
    const dispatcher = yield* WebhookDispatcher.WebhookDispatcher
    const poller = yield* WebhookPoller.WebhookPoller
    const readiness = yield* Readiness.Readiness
    // `/readyz` is not ready once one of them has ended (`Readiness.ts`).
    yield* readiness.watch(
      "webhook dispatcher",
      yield* Effect.forkScoped(dispatcher.loop(config.tick, config.shutdownGrace))
    )
    yield* readiness.watch(
      "sync scheduler",
      yield* Effect.forkScoped(ManagedSync.scheduler(ManagedSync.SCHEDULER_EVERY))
    )
    // the request log's retention (`TRACEBRIDGE_REQUEST_LOG_DAYS`), pruned even while capture is off
    const requestLog = yield* requestLogSettings(options)
    yield* readiness.watch("request log pruner", yield* Effect.forkScoped(RequestLogCapture.pruneJob(requestLog.days)))
    yield* readiness.watch(
      "events retention",
      yield* Effect.forkScoped(Events.retention(yield* Events.retentionDays.pipe(Effect.orDie)))
    )
    yield* readiness.watch(
      "webhook poller",
      yield* Effect.forkScoped(Effect.forever(
        Effect.zipRight(
          Effect.sleep(Duration.minutes(1)),
          Effect.catchAllCause(poller.runDue(config.pollInterval), (cause) => Effect.logError("webhook poller", cause))
        )
      ))
    )
  }))

/**
 * The API implementation, without a server (needs the stores and the encryption key).
 *
 * @since 0.1.0
 * @category layers
 */
export const makeApiLive = (options: Options = {}) =>
  HttpApiBuilder.api(Api).pipe(
    Layer.provide([
      HttpSystemLive,
      HttpOAuthLive,
      HttpLinkLive,
      HttpProvidersLive,
      HttpConnectionsLive,
      HttpResourcesLive,
      HttpConnectLive,
      HttpSandboxLive,
      HttpSyncLive,
      HttpWebhooksLive,
      HttpEventsLive
    ]),
    Layer.provide(RequestMiddleware),
    Layer.provide(options.rateLimiter ?? RateLimit.layer),
    Layer.provide(AuthenticationLive),
    Layer.provide(workerLive(options)),
    Layer.provideMerge(servicesLive(options)),
    // before the services: the providers record upstream calls when it is there
    Layer.provideMerge(requestLogLive(options)),
    Layer.provideMerge(Readiness.layer)
  )

/**
 * The API implementation with the default options.
 *
 * @since 0.1.0
 * @category layers
 */
export const ApiLive = makeApiLive()

/**
 * What the served layer may still need: the stores, the encryption key and a server (with the
 * platform, ETag generator, file system and paths the Node server layer gives), and the services Effect's runtime
 * gives every program.
 */
type Needs =
  | Persistence
  | Crypto
  | HttpServer.HttpServer
  | HttpPlatform.HttpPlatform
  | Etag.Generator
  | FileSystem.FileSystem
  | Path.Path
  | DefaultServices.DefaultServices

/**
 * The layer as built, checked at compile time to need nothing outside {@link Needs}: a service a
 * handler uses and no layer provides is a type error here, not a failure at the first request.
 */
const provided = <L extends Layer.Layer<never, unknown, Needs>>(layer: L): L => layer

/**
 * Everything served, without a server: handlers, OpenAPI and docs, and the services (tests drive
 * the webhook dispatcher and poller through them).
 *
 * @since 0.1.0
 * @category layers
 */
export const makeHttpLive = (given: Options = {}) =>
  provided(
    Layer.unwrapEffect(Effect.map(
      Effect.all([
        given.metrics === undefined ? Effect.orDie(MetricsServer.config) : Effect.succeed(given.metrics),
        requestLogSettings(given)
      ]),
      ([metrics, requestLog]) => {
        const options: Options = { ...given, requestLog }
        return Layer.unwrapEffect(Effect.map(
          options.accessLogEvery === undefined
            ? Effect.orDie(RequestLog.every)
            : Effect.succeed(options.accessLogEvery),
          (every) => {
            // With traces on too, the server span's end records the HTTP metrics (one wrapper a request).
            const tracing = options.tracing === true
            const logged = tracing ? RequestLog.make(every) : MetricsServer.middleware(metrics, RequestLog.make(every))
            // the request log's record of each /v1 request, when it is on
            const served = !requestLog.enabled ? logged : <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> => {
              const inner = logged(app)
              return Effect.flatMap(
                Effect.serviceOption(RequestLogCapture.Capture),
                (capture) => Option.isSome(capture) ? capture.value.middleware(inner) : inner
              )
            }
            const onResponse = MetricsServer.isEnabled(metrics) ? Metrics.recordHttp : undefined
            return HttpApiBuilder.serve(tracing ? (app) => Tracing.serverSpan(served(app), onResponse) : served)
          }
        )).pipe(
          // No span per request: nothing exports traces, and building one costs up to half a fast request.
          // With traces on, `Tracing.serverSpan` makes a cheaper one (issue #32).
          HttpMiddleware.withTracerDisabledWhen(() => true),
          Layer.provide(MetricsServer.route(metrics)),
          Layer.provide(DocsRoute.layer),
          Layer.provide(ConnectPages.layer),
          Layer.provide(McpRoute.layer),
          // the dashboard's internal API (its own HttpApi, outside /v1's document) and its page (issue #33)
          Layer.provide(DashboardHttp.HttpDashboardLive),
          Layer.provide(DashboardHttp.PagesLive),
          Layer.provide(OpenApiRoute.layer),
          Layer.provide(Readiness.routes),
          Layer.provideMerge(makeApiLive(options)),
          // the metrics (none when off), up before the services so that they are counted
          Layer.provide(MetricsServer.syncStore(metrics)),
          Layer.provide(MetricsServer.layer(metrics)),
          // the same Readiness as the API's (layers are shared by reference within a build): the
          // scrape's tracebridge_ready reads what /readyz and the drain see
          Layer.provideMerge(Readiness.layer)
        )
      }
    ))
  ) as Layer.Layer<
    | WebhookDispatcher.WebhookDispatcher
    | WebhookPoller.WebhookPoller
    | Webhooks.Webhooks
    | Providers.Providers
    | Connections.Connections
    | Jobs.Jobs
    | Polls.Polls
    | Readiness.Readiness
    | RequestLogService.RequestLog,
    never,
    Persistence | Crypto | HttpServer.HttpServer
  >

/**
 * Everything served, with the default options.
 *
 * @since 0.1.0
 * @category layers
 */
export const HttpLive: Layer.Layer<never, never, Persistence | Crypto | HttpServer.HttpServer> = makeHttpLive()
