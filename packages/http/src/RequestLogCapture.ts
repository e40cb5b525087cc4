/**
 * The request log's capture (issue #33): every `/v1` request (not `/v1/openapi.json`, the docs,
 * the Connect pages, `/metrics` or the health checks) with the upstream calls it made, kept for the
 * dashboard's Logs page.
 *
 * - **On the request's path, as little as possible.** The server middleware ({@link Service}'s
 *   `middleware`) makes one {@link Pending} record per request and holds it in a `FiberRef`
 *   ({@link current}) while the request runs: the API middleware (`Http.ts`) notes the request id,
 *   the principal and the body it read; the providers' `HttpClient` ({@link recording}) appends
 *   each upstream call, with the provider and state of the port call that sent it (`PortCalls.current`).
 *   When the answer is ready the record is offered to a bounded queue (`Queue.dropping`): a full
 *   queue drops it and counts it (`tracebridge_request_log_dropped_total`), never waiting.
 * - **Off the path, in one writer fiber.** It takes up to {@link BATCH_SIZE} records at a time,
 *   makes the rows (route template, redacted path, connection id, redacted and capped bodies, the
 *   error code) and stores them in one transaction (`RequestLogStore.insertBatch`). On shutdown the
 *   queue is written out within `TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS`; later records are dropped and
 *   counted.
 * - **Never a secret.** Paths as the access log writes them (`RequestLog.redactUrl`); bodies as
 *   JSON with every value under a secret-looking name replaced and every issued token and
 *   configured secret redacted by value (`Redact.json`); upstream calls keep no header and no body
 *   (Metrc's keys are Basic auth headers, BioTrack's login is in its JSON body), only the redacted
 *   path.
 *
 * | variable | default | what |
 * |---|---|---|
 * | `TRACEBRIDGE_REQUEST_LOG` | `on` | `off`: no capture at all (nothing on the request's path) |
 * | `TRACEBRIDGE_REQUEST_LOG_DAYS` | 14 | entries older than this are pruned (1 to 365), by a job on the nodes that run workers |
 * | `TRACEBRIDGE_REQUEST_LOG_QUEUE_SIZE` | 10000 | records waiting for the writer before new ones are dropped (1 to 1000000) |
 *
 * @since 0.1.0
 */
import type { HttpApp, HttpBody, HttpServerResponse } from "@effect/platform"
import { HttpClient, HttpServerError, HttpServerRequest, UrlParams } from "@effect/platform"
import { ProviderModule } from "@tracebridge/core"
import {
  Cause,
  Clock,
  Config,
  Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  Fiber,
  FiberRef,
  Layer,
  Option,
  Queue
} from "effect"
import * as Metrics from "./Metrics.js"
import { Accounts } from "./persistence/Accounts.js"
import type { Call, Entry } from "./persistence/RequestLogStore.js"
import { RequestLogStore } from "./persistence/RequestLogStore.js"
import * as PortCalls from "./PortCalls.js"
import * as Redact from "./Redact.js"
import * as RequestLog from "./RequestLog.js"

/**
 * How the request log runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  /** Capture requests (`TRACEBRIDGE_REQUEST_LOG=on`). */
  readonly enabled: boolean
  /** Days an entry is kept (`TRACEBRIDGE_REQUEST_LOG_DAYS`). */
  readonly days: number
  /** Records the queue holds before it drops (`TRACEBRIDGE_REQUEST_LOG_QUEUE_SIZE`). */
  readonly queueSize: number
}

/**
 * The settings from the environment (see the module's table); a bad value stops the start.
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<Settings> = Config.all({
  enabled: Config.literal("on", "off")("TRACEBRIDGE_REQUEST_LOG").pipe(
    Config.withDefault("on" as const),
    Config.map((v) => v === "on")
  ),
  days: Config.integer("TRACEBRIDGE_REQUEST_LOG_DAYS").pipe(
    Config.validate({
      message: "TRACEBRIDGE_REQUEST_LOG_DAYS must be a whole number of days from 1 to 365",
      validation: (n) => n >= 1 && n <= 365
    }),
    Config.withDefault(14)
  ),
  queueSize: Config.integer("TRACEBRIDGE_REQUEST_LOG_QUEUE_SIZE").pipe(
    Config.validate({
      message: "TRACEBRIDGE_REQUEST_LOG_QUEUE_SIZE must be from 1 to 1000000",
      validation: (n) => n >= 1 && n <= 1_000_000
    }),
    Config.withDefault(10_000)
  )
})

/**
 * The most records one write stores (one transaction, one multi-row insert per table).
 *
 * @since 0.1.0
 * @category constants
 */
export const BATCH_SIZE = 1000

/**
 * The most characters of a body stored (request body and error answer, after redaction); a longer
 * one is cut and flagged `request_body_truncated`.
 *
 * @since 0.1.0
 * @category constants
 */
export const BODY_LIMIT = 8192

/**
 * The longest request body (characters) a record holds until the writer redacts and caps it; a
 * longer one is not kept (stored as none, flagged truncated), so that a queue full of large
 * bodies stays bounded in memory (at most the queue size times this).
 *
 * @since 0.1.0
 * @category constants
 */
export const BODY_KEEP_LIMIT = 32_768

/**
 * How long the writer lets records gather after the first one before it writes a batch that is
 * not full (real time, not Effect's `Clock`): a commit on the embedded database is synchronous
 * (it holds the event loop for its fsync), so one per record would cost every request.
 *
 * @since 0.1.0
 * @category constants
 */
export const BATCH_WAIT_MS = 1000

/**
 * How often the nodes that run workers prune the log.
 *
 * @since 0.1.0
 * @category constants
 */
export const PRUNE_EVERY = Duration.hours(1)

/**
 * One upstream call as it is recorded while the request runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface PendingCall {
  readonly at: number
  readonly provider: string
  readonly state: string
  readonly operation: string | undefined
  readonly method: string
  readonly url: string
  /** Method, URL and body: the same call tried again has the same key. */
  readonly key: string
  readonly attempt: number
  done: boolean
  status: number | undefined
  failure: "timeout" | "transport" | undefined
  durationMs: number
  errorCode: string | undefined
}

/**
 * One request's record, filled in while it runs and finished when its answer is ready.
 *
 * @since 0.1.0
 * @category models
 */
export class Pending {
  requestId: string | undefined = undefined
  organisationId: string | undefined = undefined
  principal: string | undefined = undefined
  /** The request body as read (text), when it had one of at most {@link BODY_KEEP_LIMIT} characters. */
  body: string | undefined = undefined
  /** The body was longer than {@link BODY_KEEP_LIMIT}: not kept. */
  bodyTooLong = false
  readonly calls: Array<PendingCall> = []
  /** The failed calls so far by request (method, URL, query, body): the next one's attempt. */
  readonly failures = new Map<string, number>()
  /** Set once the answer is ready: calls made later (by work it forked) are not its own. */
  closed = false
  status = 0
  durationMs = 0
  /** The error answer's bytes or text (status 400 or more). */
  errorBody: Uint8Array | string | undefined = undefined
  responseRequestId: string | undefined = undefined
  /** Keeps the request body, when it is short enough. */
  keepBody(text: string): void {
    if (text.length > BODY_KEEP_LIMIT) this.bodyTooLong = true
    else this.body = text
  }
  constructor(
    readonly at: number,
    readonly started: number,
    readonly method: string,
    readonly url: string,
    readonly contentType: string | undefined
  ) {}
}

/**
 * The record of the request the current fiber serves (none outside a logged request: background
 * work such as sync polls and webhook deliveries is not logged).
 *
 * @since 0.1.0
 * @category fiber refs
 */
export const current: FiberRef.FiberRef<Pending | undefined> = FiberRef.unsafeMake<Pending | undefined>(undefined)

/**
 * Runs `self` outside the current request's record. What it forks to run on after the answer (a
 * sync's backfills, started by `GET …/sync`) inherits no record: its upstream calls are not the
 * request's, and the record is not kept alive, and growing, for as long as that work runs.
 *
 * @since 0.1.0
 * @category combinators
 */
export const detached = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(self, current, undefined)

/** The provider, state and port method of the port call running. */
const decoder = new TextDecoder()

const bodyKey = (body: HttpBody.HttpBody): string =>
  body._tag === "Uint8Array"
    ? decoder.decode(body.body)
    : body._tag === "Raw" && typeof body.body === "string"
    ? body.body
    : ""

const failed = (call: PendingCall) =>
  call.done &&
  (call.status === undefined || call.status >= 500 || call.status === 429 || call.errorCode !== undefined)

/**
 * An `HttpClient` that records each request sent while a logged request runs: provider, state,
 * method, URL (redacted when written), status or failure, time taken, attempt, and the provider's
 * own error code (`errorCodeOf`, the module's `upstreamErrorCode`, asked about short answers; the
 * answer's text is cached by the response, so the adapter reads the same). Outside a logged
 * request it passes requests through untouched.
 *
 * @since 0.1.0
 * @category wrappers
 */
export const recording = (
  client: HttpClient.HttpClient,
  fallbackProvider: string,
  errorCodeOf: ProviderModule.ProviderModule["upstreamErrorCode"],
  now: () => number
): HttpClient.HttpClient =>
  HttpClient.transform(client, (effect, request) =>
    Effect.flatMap(FiberRef.get(current), (pending) => {
      if (pending === undefined || pending.closed) return effect
      return Effect.flatMap(FiberRef.get(PortCalls.current), (context) => {
        const key = `${request.method} ${request.url}?${
          request.urlParams.length === 0 ? "" : JSON.stringify(request.urlParams)
        } ${bodyKey(request.body)}`
        const attempt = 1 + (pending.failures.get(key) ?? 0)
        const params = request.urlParams.length === 0
          ? ""
          : `${request.url.includes("?") ? "&" : "?"}${UrlParams.toString(request.urlParams)}`
        const call: PendingCall = {
          at: now(),
          provider: context?.provider ?? fallbackProvider,
          state: context?.state ?? "unknown",
          operation: context?.operation,
          method: request.method,
          url: `${request.url}${params}`,
          key,
          attempt,
          done: false,
          status: undefined,
          failure: undefined,
          durationMs: 0,
          errorCode: undefined
        }
        pending.calls.push(call)
        const started = performance.now()
        const read = errorCodeOf === undefined ? effect : Effect.tap(effect, (response) =>
          Effect.match(response.text, {
            onFailure: () => undefined,
            onSuccess: (text) => {
              if (text.length <= ProviderModule.UPSTREAM_ERROR_BODY_LIMIT) {
                call.errorCode = errorCodeOf({ status: response.status, body: text })
              }
            }
          }))
        return Effect.onExit(read, (exit) =>
          Effect.sync(() => {
            call.done = true
            call.durationMs = performance.now() - started
            if (exit._tag === "Success") call.status = exit.value.status
            else call.failure = Cause.isInterruptedOnly(exit.cause) ? "timeout" : "transport"
            if (failed(call)) pending.failures.set(key, (pending.failures.get(key) ?? 0) + 1)
          }))
      })
    }))

/** Whether a path is logged: `/v1`, but not its OpenAPI document. */
const isLogged = (url: string): boolean =>
  (url.startsWith("/v1/") || url === "/v1" || url.startsWith("/v1?")) && !url.startsWith("/v1/openapi.json")

/**
 * The request log's running side.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly settings: Settings
  /** The server middleware: one record per logged request, offered to the queue with its answer. */
  readonly middleware: <E, R>(app: HttpApp.Default<E, R>) => HttpApp.Default<E, R>
  /** Records dropped so far (queue full, shutdown, or a failed write). */
  readonly dropped: () => number
  /** Waits until every record offered so far is written (or dropped). */
  readonly flush: Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Capture extends Context.Tag("@tracebridge/http/RequestLogCapture")<Capture, Service>() {}

const responseOf = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>) =>
  exit._tag === "Success" ? exit.value : HttpServerError.causeResponseStripped(exit.cause)[0]

/** The connection id in the path, where the route has one. */
const connectionOf = (route: string, url: string): string | null => {
  const index = route.split("/").indexOf(":connection_id")
  if (index < 0) return null
  const q = url.indexOf("?")
  const segment = (q < 0 ? url : url.slice(0, q)).split("/")[index]
  if (segment === undefined || segment === "") return null
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

const cap = (text: string): { readonly text: string; readonly truncated: boolean } =>
  text.length <= BODY_LIMIT ? { text, truncated: false } : { text: text.slice(0, BODY_LIMIT), truncated: true }

/** A body as stored: JSON (a form body read as one), redacted, capped; null when not JSON. */
const storedBody = (
  text: string,
  contentType: string | undefined,
  redact: (s: string) => string
): { readonly text: string; readonly truncated: boolean } | null => {
  if (text.trim() === "") return null
  let value: unknown
  if ((contentType ?? "").toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    value = Object.fromEntries(new URLSearchParams(text))
  } else {
    try {
      value = JSON.parse(text)
    } catch {
      return null
    }
  }
  return cap(JSON.stringify(Redact.json(value, redact)))
}

const errorCodeOfBody = (value: unknown): string | null => {
  if (typeof value !== "object" || value === null) return null
  const error = (value as { readonly error?: unknown }).error
  if (typeof error === "string") return error
  if (typeof error === "object" && error !== null) {
    const code = (error as { readonly code?: unknown }).code
    if (typeof code === "string") return code
  }
  return null
}

const TOKEN_ROUTE = "/v1/oauth/token"

/** The secret-looking names of an error answer: `sensitiveName` but `code`, the envelope's own field. */
const errorNames = /token|secret|key|password|credential/i

/**
 * The request log's capture, queue and writer (the store and the organisations' store from
 * context). With `enabled` false, nothing: no middleware, no queue, no fiber.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (settings: Settings, shutdownGrace: Duration.Duration) =>
  Layer.scoped(
    Capture,
    Effect.gen(function*() {
      const store = yield* RequestLogStore
      const accounts = yield* Accounts
      const redact = yield* Redact.fromConfig
      const clock = yield* Effect.clock
      const queue = yield* Queue.dropping<Pending>(settings.queueSize)
      let dropped = 0
      let waiting = 0
      let stopped = false
      let idle: Array<Deferred.Deferred<void>> = []
      const drop = (n: number, reason: "queue_full" | "shutdown" | "write_failed") => {
        dropped += n
        Metrics.recordRequestLogDropped(n, reason)
      }
      const settle = (n: number) => {
        waiting -= n
        if (waiting <= 0) urgent = false
        if (waiting <= 0 && idle.length > 0) {
          const done = idle
          idle = []
          for (const d of done) Deferred.unsafeDone(d, Effect.void)
        }
      }

      const rowsOf = (p: Pending): { entry: Entry; calls: Array<Call> } | undefined => {
        const requestId = p.requestId ?? p.responseRequestId
        if (requestId === undefined) return undefined
        const route = Metrics.routeOf(p.url)
        let errorBody: string | null = null
        let errorCode: string | null = null
        if (p.status >= 400 && p.errorBody !== undefined) {
          const text = typeof p.errorBody === "string" ? p.errorBody : decoder.decode(p.errorBody)
          try {
            const value: unknown = JSON.parse(text)
            errorCode = errorCodeOfBody(value)
            errorBody = cap(JSON.stringify(Redact.json(value, redact, errorNames))).text
          } catch {
            errorBody = null
          }
        }
        const body = p.body === undefined ? null : storedBody(p.body, p.contentType, redact)
        const calls = p.calls.map((c, i): Call => ({
          request_id: requestId,
          n: i + 1,
          at: c.at,
          provider: c.provider,
          state: c.state,
          operation: c.operation ?? null,
          method: c.method,
          path: redact(RequestLog.redactUrl(pathOf(c.url))),
          status: c.status ?? null,
          failure: c.done ? (c.failure ?? null) : "timeout",
          duration_ms: Math.round(c.durationMs * 1000) / 1000,
          attempt: c.attempt,
          rate_limited: c.status === 429,
          error_code: c.errorCode ?? null
        }))
        return {
          entry: {
            request_id: requestId,
            organisation_id: p.organisationId ?? null,
            at: p.at,
            method: p.method,
            route,
            path: redact(RequestLog.redactUrl(p.url)),
            status: p.status,
            status_class: Metrics.statusClass(p.status),
            duration_ms: Math.round(p.durationMs * 1000) / 1000,
            principal: p.principal ?? null,
            connection_id: connectionOf(route, p.url),
            error_code: errorCode,
            request_body: body?.text ?? null,
            request_body_truncated: p.bodyTooLong || (body?.truncated ?? false),
            error_body: errorBody,
            upstream_calls: calls.length
          },
          calls
        }
      }

      // The token endpoint has no bearer: its entry belongs to the organisation of the client it
      // names, when that client exists.
      const attribute = (row: { entry: Entry; calls: Array<Call> }) =>
        Effect.gen(function*() {
          const entry = row.entry
          if (entry.organisation_id !== null || entry.route !== TOKEN_ROUTE || entry.request_body === null) return row
          let clientId: unknown
          try {
            clientId = (JSON.parse(entry.request_body) as { readonly client_id?: unknown }).client_id
          } catch {
            return row
          }
          if (typeof clientId !== "string" || clientId === "") return row
          const client = yield* accounts.getClient(clientId)
          if (Option.isNone(client)) return row
          return {
            ...row,
            entry: { ...entry, organisation_id: client.value.organisation_id, principal: client.value.id }
          }
        })

      const write = (batch: ReadonlyArray<Pending>) =>
        Effect.gen(function*() {
          const rows: Array<{ entry: Entry; calls: Array<Call> }> = []
          for (const p of batch) {
            const row = rowsOf(p)
            if (row !== undefined) rows.push(yield* attribute(row))
          }
          yield* store.insertBatch(rows)
        }).pipe(
          Effect.catchAllCause((cause) =>
            Effect.zipRight(
              Effect.sync(() => drop(batch.length, "write_failed")),
              Effect.logWarning("request log: a batch could not be written", Cause.squash(cause)).pipe(
                Effect.annotateLogs({ entries: batch.length })
              )
            )
          ),
          Effect.ensuring(Effect.sync(() => settle(batch.length)))
        )

      // A flush in progress: the writer writes what it has without waiting for more.
      let urgent = false
      let wake: (() => void) | undefined
      const pause = Effect.async<void>((resume) => {
        const timer = setTimeout(() => {
          wake = undefined
          resume(Effect.void)
        }, BATCH_WAIT_MS)
        wake = () => {
          clearTimeout(timer)
          wake = undefined
          resume(Effect.void)
        }
        return Effect.sync(() => {
          clearTimeout(timer)
          wake = undefined
        })
      })
      // A batch taken is always written, even when the writer is interrupted while it waits for more.
      const writer = yield* Effect.forkDaemon(Effect.forever(
        Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const batch = [...(yield* restore(Queue.takeBetween(queue, 1, BATCH_SIZE)))]
            if (batch.length < BATCH_SIZE && !urgent) {
              yield* Effect.exit(restore(pause))
              batch.push(...(yield* Queue.takeUpTo(queue, BATCH_SIZE - batch.length)))
            }
            yield* write(batch)
          })
        )
      ))

      // On shutdown: no new record; the batch being written ends; the rest is written within the grace.
      yield* Effect.addFinalizer(() =>
        Effect.gen(function*() {
          stopped = true
          yield* Fiber.interrupt(writer)
          const rest = [...(yield* Queue.takeAll(queue))]
          yield* Queue.shutdown(queue)
          const flushed = Effect.gen(function*() {
            for (let i = 0; i < rest.length; i += BATCH_SIZE) yield* write(rest.slice(i, i + BATCH_SIZE))
          })
          const done = yield* Effect.timeout(flushed, shutdownGrace).pipe(Effect.option)
          if (Option.isNone(done)) yield* Effect.logWarning("request log: the queue was not written out in the grace")
        })
      )

      const finish = (pending: Pending, exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>) => {
        pending.closed = true
        pending.durationMs = performance.now() - pending.started
        const response = responseOf(exit)
        pending.status = response.status
        pending.responseRequestId = response.headers["x-request-id"]
        if (response.status >= 400) {
          const body = response.body
          pending.errorBody = body._tag === "Uint8Array" ?
            body.body :
            body._tag === "Raw" && typeof body.body === "string"
            ? body.body
            : undefined
        }
        if (stopped) return drop(1, "shutdown")
        if (queue.unsafeOffer(pending)) waiting++
        else drop(1, "queue_full")
      }

      const middleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          if (!isLogged(request.url)) return app
          const pending = new Pending(
            clock.unsafeCurrentTimeMillis(),
            performance.now(),
            request.method,
            request.url,
            request.headers["content-type"]
          )
          // Each request runs in a fiber of its own: the record is set on it (and inherited by what
          // it forks) rather than scoped with `locally`; `tap`s rather than `onExit`, which costs more
          // per request. An interrupted request (its client gone) has no answer and is not logged.
          return Effect.zipRight(
            FiberRef.set(current, pending),
            app.pipe(
              Effect.tap((response) => Effect.sync(() => finish(pending, Exit.succeed(response)))),
              Effect.tapErrorCause((cause) =>
                Cause.isInterruptedOnly(cause) ? Effect.void : Effect.sync(() => finish(pending, Exit.failCause(cause)))
              )
            )
          )
        })

      return {
        settings,
        middleware,
        dropped: () => dropped,
        flush: Effect.suspend(() => {
          if (waiting <= 0) return Effect.void
          urgent = true
          wake?.()
          const d = Deferred.unsafeMake<void>(writer.id())
          idle.push(d)
          return Deferred.await(d)
        })
      }
    })
  )

/** The path and query of a URL (an upstream call's origin is not kept). */
const pathOf = (url: string): string => {
  const match = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url)
  const rest = match === null ? url : url.slice(match[0].length)
  return rest === "" ? "/" : rest
}

/**
 * Deletes the entries older than `days` days (now from Effect's `Clock`); answers how many.
 *
 * @since 0.1.0
 * @category retention
 */
export const prune = (days: number): Effect.Effect<number, never, RequestLogStore> =>
  Effect.flatMap(
    Effect.all([RequestLogStore, Clock.currentTimeMillis]),
    ([store, now]) => store.prune(now - days * 86_400_000)
  )

/**
 * The retention job: a prune at once, then every {@link PRUNE_EVERY}; a failed prune is logged and
 * tried again at the next.
 *
 * @since 0.1.0
 * @category retention
 */
export const pruneJob = (days: number): Effect.Effect<never, never, RequestLogStore> =>
  Effect.forever(
    Effect.zipRight(
      Effect.catchAllCause(
        Effect.flatMap(prune(days), (n) => n > 0 ? Effect.logDebug(`request log: ${n} entries pruned`) : Effect.void),
        (cause) => Effect.logWarning("request log: prune failed", Cause.squash(cause))
      ),
      Effect.sleep(PRUNE_EVERY)
    )
  )
