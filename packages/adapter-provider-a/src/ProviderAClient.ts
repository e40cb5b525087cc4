/**
 * The HTTP client of provider_a: one place that knows how to call a Metrc-style API.
 *
 * - Base URL per state and environment (a session's `baseUrl` wins), `licenseNumber` on facility
 *   calls, HTTP Basic with Tracebridge's vendor key and the user's key (both `Redacted`).
 * - Pacing: every request first takes a token of the upstream rate governor
 *   (`UpstreamGovernor` of core, ADR 0015): one bucket per provider, vendor key (a fingerprint)
 *   and licence, refilled at `perFacility.requestsPerSecond` (95% of the descriptor's rate by
 *   default), and one per provider and vendor key (`{provider}|{fingerprint}|*`) at
 *   `perVendorKey.requestsPerSecond` (95% of Metrc's 150/s), both evenly spaced. The governor in
 *   context when the client is built is used (the HTTP service's, shared by every node through the
 *   database); without one, an in-process governor of the client's own. Concurrency caps per
 *   licence and per vendor key hold in this process, so that Tracebridge does not cause the
 *   provider's 429s.
 * - Priority: a background caller (`UpstreamGovernor.background`: the managed sync, the webhook
 *   poller) is admitted by the governor at its background share of both buckets, outside the caps,
 *   and holds at most that share of the vendor key's cap in this process, so an interactive call
 *   (a `/v1` read, a Connect login check) never queues behind a backfill.
 * - Retries: a 429 is retried after its `Retry-After` (or backoff), and its `Retry-After` pauses
 *   the licence's bucket in the governor for every caller; a GET that meets a 5xx, a
 *   timeout or a network error is retried with exponential backoff; writes are never retried
 *   after a 5xx, since the provider may have applied them.
 * - The caller's overall deadline (`Deadline`, e.g. one per `/v1` request): a try's timeout is
 *   cut to the time left, and a retry whose wait would reach the deadline is not made, so the
 *   last failure is reported within the budget instead.
 * - Answers: bodies are read with case-insensitive keys and decoded with the wire schemas;
 *   failures become the core error family (`ProviderError`) and nothing else.
 *
 * @since 0.1.0
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import type { Session } from "@tracebridge/core"
import { Deadline, ProviderDescriptor, ProviderError, UpstreamGovernor } from "@tracebridge/core"
import { Clock, Context, Duration, Effect, Either, Layer, Option, Redacted, Schema } from "effect"
import type { Scope } from "effect"
import { decodeWire } from "./internal/decode.js"
import { Credentials, descriptor } from "./internal/descriptor.js"
import { ErrorMessage, ErrorRow } from "./internal/wire/common.js"
import { ProviderAConfig } from "./ProviderAConfig.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions {
  /** e.g. `packages.list`, named in errors. */
  readonly operation: string
  /** The facility licence, sent as `licenseNumber` and used for pacing. */
  readonly license?: string | undefined
  readonly query?: Readonly<Record<string, string | number | undefined>>
  /** What a 404 means. */
  readonly notFound?: { readonly resource: string; readonly id: string }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Client {
  readonly get: <A, I>(
    session: Session.Session,
    path: string,
    schema: Schema.Schema<A, I>,
    options: RequestOptions
  ) => Effect.Effect<A, ProviderError.ProviderError>
  readonly post: <A, I>(
    session: Session.Session,
    path: string,
    body: unknown,
    schema: Schema.Schema<A, I>,
    options: RequestOptions
  ) => Effect.Effect<A, ProviderError.ProviderError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class ProviderAClient extends Context.Tag("@tracebridge/adapter-provider-a/ProviderAClient")<
  ProviderAClient,
  Client
>() {}

type Failure =
  | {
    readonly _tag: "Status"
    readonly status: number
    readonly body: string
    readonly retryAfter: Option.Option<number>
  }
  | { readonly _tag: "Transport"; readonly message: string }
  | { readonly _tag: "Timeout" }

const PROVIDER = "provider_a" as const

const decodeCredentials = Schema.decodeUnknownEither(Credentials)

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date. */
const parseRetryAfter = (value: string | undefined, now: number): Option.Option<number> => {
  if (value === undefined || value.trim() === "") return Option.none()
  if (/^\d+$/.test(value.trim())) return Option.some(Number(value.trim()) * 1000)
  const at = Date.parse(value)
  return Number.isNaN(at) ? Option.none() : Option.some(Math.max(0, at - now))
}

const messagesOf = (body: string): ReadonlyArray<string> => {
  try {
    const json: unknown = JSON.parse(body)
    const rows = Schema.decodeUnknownEither(Schema.Array(ErrorRow))(json)
    if (Either.isRight(rows)) {
      return rows.right.map((r) => (r.row === undefined ? r.message : `row ${r.row}: ${r.message}`))
    }
    const message = decodeWire(ErrorMessage, "error")(json)
    if (Either.isRight(message)) return [message.right.Message]
  } catch {
    // not JSON: fall through
  }
  const text = body.trim()
  return text === "" ? [] : [text.slice(0, 500)]
}

const toProviderError = (failure: Failure, options: RequestOptions): ProviderError.ProviderError => {
  const operation = options.operation
  if (failure._tag === "Timeout") {
    return new ProviderError.ProviderTimeout({
      provider: PROVIDER,
      operation,
      message: `provider_a did not answer ${operation} in time`
    })
  }
  if (failure._tag === "Transport") {
    return new ProviderError.ProviderUnavailable({
      provider: PROVIDER,
      operation,
      message: `provider_a could not be reached: ${failure.message}`
    })
  }
  const messages = messagesOf(failure.body)
  const said = messages.length > 0 ? `: ${messages.join("; ")}` : ""
  switch (failure.status) {
    case 400:
    case 413:
    case 422:
      return new ProviderError.ProviderRejected({
        provider: PROVIDER,
        operation,
        code: String(failure.status),
        messages,
        message: `provider_a refused ${operation}${said}`
      })
    case 401:
      return new ProviderError.ProviderLoginRequired({
        provider: PROVIDER,
        operation,
        reason: "invalid_credentials",
        message: `provider_a refused the login${said || ": Invalid or no authentication provided."}`
      })
    case 403:
      return new ProviderError.ProviderPermissionDenied({
        provider: PROVIDER,
        operation,
        message: `The login may not ${operation}${options.license ? ` at ${options.license}` : ""}${said}`
      })
    case 404:
      return options.notFound
        ? ProviderError.ResourceNotFound.of(options.notFound.resource, options.notFound.id)
        : new ProviderError.ProviderUnavailable({
          provider: PROVIDER,
          operation,
          status: 404,
          message: `provider_a has no endpoint for ${operation}${said}`
        })
    case 429:
      return new ProviderError.ProviderRateLimited({
        provider: PROVIDER,
        operation,
        ...(Option.isSome(failure.retryAfter) ? { retryAfter: Duration.millis(failure.retryAfter.value) } : {}),
        message: `provider_a kept rate limiting ${operation}${said}`
      })
    default:
      return new ProviderError.ProviderUnavailable({
        provider: PROVIDER,
        operation,
        status: failure.status,
        message: `provider_a answered ${operation} with ${failure.status}${said}`
      })
  }
}

/** How many of the vendor key's in-flight requests in this process the background may hold. */
const backgroundConcurrency = (pace: { readonly concurrency: number }): number =>
  Math.max(1, Math.floor(Math.max(1, pace.concurrency) * UpstreamGovernor.BACKGROUND_SHARE))

interface Limiter {
  readonly limit: <A, E, R>(task: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * Builds the client from an `HttpClient` and the settings. Pacing state lives in the layer's scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Client, never, HttpClient.HttpClient | ProviderAConfig | Scope.Scope> = Effect.gen(
  function*() {
    const http = yield* HttpClient.HttpClient
    const settings = yield* ProviderAConfig
    const limiters = new Map<string, Limiter>()
    const governor = yield* UpstreamGovernor.fromContextOrMemory
    const vendorKeyFingerprint = yield* UpstreamGovernor.fingerprint(settings.vendorKey)
    /** The vendor key's own bucket, across every licence. */
    const vendorBucket = UpstreamGovernor.key({ provider: PROVIDER, vendorKeyFingerprint, licence: "*" })
    const caps = new Map<string, Effect.Semaphore>()
    const capFor = (key: string) =>
      Effect.suspend(() => {
        const existing = caps.get(key)
        if (existing !== undefined) return Effect.succeed(existing)
        return Effect.map(Effect.makeSemaphore(Math.max(1, settings.perFacility.concurrency)), (made) => {
          const raced = caps.get(key)
          if (raced !== undefined) return raced
          caps.set(key, made)
          return made
        })
      })

    /** The vendor key's concurrency cap in this process (its rate is the governor's bucket). */
    const limiterFor = (key: string, pace: { readonly concurrency: number }) =>
      Effect.suspend(() => {
        const existing = limiters.get(key)
        if (existing !== undefined) return Effect.succeed(existing)
        return Effect.gen(function*() {
          const semaphore = yield* Effect.makeSemaphore(Math.max(1, pace.concurrency))
          const limiter: Limiter = { limit: (task) => semaphore.withPermits(1)(task) }
          const raced = limiters.get(key)
          if (raced !== undefined) return raced
          limiters.set(key, limiter)
          return limiter
        })
      })

    const vendorKey = Redacted.value(settings.vendorKey)

    const execute = <A, I>(
      method: "GET" | "POST",
      session: Session.Session,
      path: string,
      body: unknown,
      schema: Schema.Schema<A, I>,
      options: RequestOptions
    ): Effect.Effect<A, ProviderError.ProviderError> =>
      Effect.gen(function*() {
        if (vendorKey === "") {
          // Tracebridge's own key is missing: the operator's fault, never the end user's login.
          return yield* new ProviderError.ProviderUnavailable({
            provider: PROVIDER,
            operation: options.operation,
            message: "Tracebridge is not configured for provider_a: its operator must set PROVIDER_A_VENDOR_KEY " +
              "(the integrator's vendor key); no request was sent"
          })
        }
        const credentials = decodeCredentials(Redacted.value(session.credentials))
        if (Either.isLeft(credentials)) {
          return yield* new ProviderError.ProviderLoginRequired({
            provider: PROVIDER,
            operation: options.operation,
            reason: "missing_credentials",
            message: "The provider_a login needs a user API key"
          })
        }
        const base = yield* ProviderDescriptor.baseUrl(descriptor, session.state, session.environment, session.baseUrl)
        const params: Record<string, string> = {}
        if (options.license !== undefined) params.licenseNumber = options.license
        for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) params[k] = String(v)
        let request = (method === "GET" ? HttpClientRequest.get : HttpClientRequest.post)(
          `${base.replace(/\/+$/, "")}${path}`
        ).pipe(
          HttpClientRequest.setUrlParams(params),
          HttpClientRequest.basicAuth(vendorKey, credentials.right.user_key),
          HttpClientRequest.acceptJson
        )
        if (method === "POST") request = HttpClientRequest.bodyUnsafeJson(request, body)

        const once: Effect.Effect<string, Failure> = Effect.gen(function*() {
          const response = yield* http.execute(request).pipe(
            Effect.mapError((e): Failure => ({ _tag: "Transport", message: e.message }))
          )
          const text = yield* response.text.pipe(
            Effect.mapError((e): Failure => ({ _tag: "Transport", message: e.message }))
          )
          if (response.status >= 200 && response.status < 300) return text
          const now = yield* Clock.currentTimeMillis
          return yield* Effect.fail<Failure>({
            _tag: "Status",
            status: response.status,
            body: text,
            retryAfter: parseRetryAfter(response.headers["retry-after"], now)
          })
        }).pipe(
          Effect.scoped,
          (self) =>
            Effect.flatMap(Deadline.clamp(settings.requestTimeout), (duration) =>
              Effect.timeoutFail(self, { duration, onTimeout: (): Failure => ({ _tag: "Timeout" }) }))
        )

        const vendor = yield* limiterFor(`vendor`, settings.perVendorKey)
        const bucket = UpstreamGovernor.key({ provider: PROVIDER, vendorKeyFingerprint, licence: options.license })
        // A background caller (the sync) is admitted first, outside the caps, at the background
        // share of both buckets' rates, and holds at most that share of the vendor key's cap: an
        // interactive call (a /v1 read, a Connect login check) finds room, not a backfill's queue.
        const background = yield* UpstreamGovernor.isBackground
        // The governor's tokens (the licence's, then the vendor key's) are taken inside the
        // concurrency caps, so that a request starts at its tokens' time rather than bunching up
        // behind a cap.
        const governed = (admittedAfter: Duration.Duration) =>
          governor.take(bucket, settings.perFacility).pipe(
            Effect.zipRight(governor.take(vendorBucket, settings.perVendorKey)),
            Effect.timed,
            // the governor's wait of the last attempt, on this request's span (issue #32)
            Effect.flatMap(([waited]) =>
              Effect.annotateCurrentSpan(
                "tracebridge.governor_wait_ms",
                Duration.toMillis(waited) + Duration.toMillis(admittedAfter)
              )
            ),
            Effect.zipRight(once)
          )
        const capped = (admittedAfter: Duration.Duration) =>
          options.license === undefined
            ? vendor.limit(governed(admittedAfter))
            : Effect.flatMap(capFor(bucket), (cap) =>
              vendor.limit(cap.withPermits(1)(governed(admittedAfter))))
        const paced = background
          ? Effect.flatMap(
            Effect.timed(Effect.zipRight(
              governor.admit(bucket, settings.perFacility),
              governor.admit(vendorBucket, settings.perVendorKey)
            )),
            ([admittedAfter]) =>
              Effect.flatMap(
                limiterFor(`vendor|background`, { concurrency: backgroundConcurrency(settings.perVendorKey) }),
                (share) => share.limit(capped(admittedAfter))
              )
          )
          : capped(Duration.zero)

        const maxRetryAfter = Duration.toMillis(settings.maxRetryAfter)
        const attempt = (n: number): Effect.Effect<string, Failure> =>
          Effect.catchAll(
            Effect.zipRight(Effect.annotateCurrentSpan("tracebridge.attempts", n + 1), paced),
            (failure) => {
              const throttled = failure._tag === "Status" && failure.status === 429
              const retriable = throttled ||
                (method === "GET" && (failure._tag !== "Status" || failure.status >= 500))
              // Every 429 is told to the governor: counted, and with a Retry-After every caller of
              // this bucket, on every node, waits that long.
              const told = throttled && failure._tag === "Status"
                ? governor.throttled(bucket, failure.retryAfter)
                : Effect.void
              if (!retriable || n >= settings.maxRetries) {
                return throttled
                  ? Effect.zipRight(
                    Effect.zipRight(told, Effect.annotateCurrentSpan("tracebridge.upstream_429", "gave_up")),
                    Effect.fail(failure)
                  )
                  : Effect.fail(failure)
              }
              return Effect.zipRight(told, retry(failure, n))
            }
          )
        const retry = (failure: Failure, n: number): Effect.Effect<string, Failure> =>
          Effect.suspend(() => {
            // a 429's outcome on the request's span: retried, or given up (too long a wait, or past the deadline)
            const mark = (outcome: "retried" | "gave_up") =>
              failure._tag === "Status" && failure.status === 429
                ? Effect.annotateCurrentSpan("tracebridge.upstream_429", outcome)
                : Effect.void
            const backoff = Duration.toMillis(settings.retryBaseDelay) * 2 ** n
            const retryAfter = failure._tag === "Status" ? failure.retryAfter : Option.none()
            const wait = Option.getOrElse(retryAfter, () => backoff)
            if (wait > maxRetryAfter) {
              return Effect.zipRight(mark("gave_up"), Effect.fail(failure))
            }
            return Effect.flatMap(Deadline.allows(Duration.millis(wait)), (allowed) =>
              !allowed
                ? Effect.zipRight(mark("gave_up"), Effect.fail(failure))
                : Effect.zipRight(
                  mark("retried"),
                  wait > 0 ? Effect.zipRight(Effect.sleep(Duration.millis(wait)), attempt(n + 1)) : attempt(n + 1)
                ))
          })

        const text = yield* attempt(0).pipe(
          Effect.tapError((f) =>
            f._tag === "Status" ? Effect.annotateCurrentSpan("http.response.status_code", f.status) : Effect.void
          ),
          Effect.mapError((f) => toProviderError(f, options))
        )
        let json: unknown = null
        if (text.trim() !== "") {
          try {
            json = JSON.parse(text)
          } catch {
            return yield* new ProviderError.ProviderInvalidResponse({
              provider: PROVIDER,
              operation: options.operation,
              path: "(body)",
              message: `provider_a answered ${options.operation} with a body that is not JSON`
            })
          }
        }
        return yield* decodeWire(schema, options.operation)(json)
      }).pipe(Effect.withSpan(`ProviderAClient.${method}`, {
        captureStackTrace: false,
        kind: "client",
        attributes: { provider: PROVIDER, state: session.state, path, operation: options.operation }
      }))

    return {
      get: (session, path, schema, options) => execute("GET", session, path, undefined, schema, options),
      post: (session, path, body, schema, options) => execute("POST", session, path, body, schema, options)
    }
  }
)

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ProviderAClient, never, HttpClient.HttpClient | ProviderAConfig> = Layer.scoped(
  ProviderAClient,
  make
)
