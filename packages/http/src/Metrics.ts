/**
 * The Prometheus metrics of issue #32, as Effect `Metric`s (the `@effect/opentelemetry` bridge
 * reads them at each scrape, `MetricsServer.ts`). Every name is `tracebridge_`-prefixed and stable;
 * every label is bounded: a route template (never the raw path), a method, a status class (`2xx`…),
 * a provider, a state, an outcome, a resource or a status; never an id. `docs/operations.md` lists
 * them.
 *
 * Off by default and free when off: the recorders check one flag (`isOn`, set while the metrics
 * layer is up) before doing anything, and the wrappers (`port`, `governor`, `syncStore`, `http`)
 * are installed only when it is on.
 *
 * @since 0.1.0
 */
import type { HttpApp } from "@effect/platform"
import { HttpMiddleware, HttpServerError, HttpServerRequest } from "@effect/platform"
import type { ProviderPort } from "@tracebridge/core"
import { UpstreamGovernor } from "@tracebridge/core"
import type { SyncStore } from "@tracebridge/sync"
import { Effect, FiberRef, Metric, MetricBoundaries, MetricLabel } from "effect"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { Lru } from "./Lru.js"
import type { Snapshot } from "./persistence/MetricsStore.js"
import * as PortCalls from "./PortCalls.js"
import * as Routes from "./Routes.js"

let on = false
let layers = 0

/**
 * Whether metrics are recorded (the metrics layer is up).
 *
 * @since 0.1.0
 * @category state
 */
export const isOn = (): boolean => on

const seconds = MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60])

const counter = (name: string, description: string) => Metric.counter(name, { description, incremental: true })
const gauge = (name: string, description: string) => Metric.gauge(name, { description })

/**
 * Every metric, by name.
 *
 * @since 0.1.0
 * @category metrics
 */
export const metrics = {
  httpRequests: counter("tracebridge_http_requests_total", "HTTP requests by route template, method and status class"),
  httpDuration: Metric.histogram(
    "tracebridge_http_request_duration_seconds",
    seconds,
    "HTTP request duration in seconds, by route template and method"
  ),
  upstreamRequests: counter(
    "tracebridge_upstream_requests_total",
    "Provider port calls by provider, state and outcome (ok or the error kind)"
  ),
  upstreamRateLimited: counter(
    "tracebridge_upstream_rate_limited_total",
    "Upstream 429 answers by provider and state (one with Retry-After pauses the rate governor's bucket)"
  ),
  upstreamGovernorWait: Metric.histogram(
    "tracebridge_upstream_governor_wait_seconds",
    seconds,
    "Time an upstream request waited for a token of the rate governor, by provider"
  ),
  upstreamDeadlineExceeded: counter(
    "tracebridge_upstream_deadline_exceeded_total",
    "Requests whose upstream deadline (TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS) passed: 504 provider_timeout"
  ),
  skippedRows: counter("tracebridge_skipped_rows_total", "Upstream rows left out of a list (tolerant reads)"),
  syncFacilities: gauge("tracebridge_sync_facilities", "Sync facilities by status (backfilling, live, error)"),
  syncLag: gauge("tracebridge_sync_lag_seconds", "Now minus the oldest last_synced_at among live facilities"),
  syncPages: counter("tracebridge_sync_pages_stored_total", "Pages stored by the sync, by phase (backfill, poll)"),
  syncPollFailures: counter("tracebridge_sync_poll_failures_total", "Sync reads of a facility that failed"),
  syncTakeovers: counter("tracebridge_sync_takeovers_total", "Stalled backfills taken over (claimStalled)"),
  webhookDeliveries: counter(
    "tracebridge_webhook_deliveries_total",
    "Webhook delivery attempts by outcome: succeeded, retrying, failed (dead-lettered), abandoned"
  ),
  webhookAttempts: counter("tracebridge_webhook_attempts_total", "Webhook delivery attempts made"),
  webhookAttemptDuration: Metric.histogram(
    "tracebridge_webhook_attempt_duration_seconds",
    seconds,
    "Webhook delivery attempt duration in seconds"
  ),
  webhookPending: gauge("tracebridge_webhook_pending", "Webhook deliveries pending (due or waiting for a retry)"),
  webhookOldestPending: gauge(
    "tracebridge_webhook_oldest_pending_seconds",
    "Age of the oldest pending webhook delivery (0 when none)"
  ),
  webhookDeadLettered: gauge("tracebridge_webhook_dead_lettered", "Webhook deliveries failed for good (dead letter)"),
  heapUsed: gauge("tracebridge_process_heap_used_bytes", "V8 heap used (process.memoryUsage().heapUsed)"),
  heapTotal: gauge("tracebridge_process_heap_total_bytes", "V8 heap size (process.memoryUsage().heapTotal)"),
  resident: gauge("tracebridge_process_resident_memory_bytes", "Resident set size (process.memoryUsage().rss)"),
  eventLoopLag: gauge(
    "tracebridge_process_event_loop_lag_seconds",
    "Event-loop delay since the last scrape, by quantile (p50, p99, max)"
  ),
  ready: gauge(
    "tracebridge_ready",
    "1 when /readyz would answer 200, 0 when it would answer 503 (draining, database, migrations, workers)"
  ),
  requestLogDropped: counter(
    "tracebridge_request_log_dropped_total",
    "Request log entries not stored, by reason: queue_full (the writer is behind), shutdown, write_failed"
  ),
  up: gauge("tracebridge_up", "1 while the process serves; the start time is tracebridge_process_start_time_seconds"),
  startTime: gauge("tracebridge_process_start_time_seconds", "When the process started (Unix seconds)")
} as const

/**
 * The label arrays, one per combination (every label is bounded, so is this map). The same array
 * for the same labels matters: Effect finds a metric's series from the array's identity (a
 * `WeakMap`), so a fresh array per update builds and hashes a new key and leaves a weak entry for
 * the collector, which cost more than the rest of the request's recording.
 */
const labelArrays = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()

const labels = (tags: Readonly<Record<string, string>>): ReadonlyArray<MetricLabel.MetricLabel> => {
  let key = ""
  for (const k in tags) key += `${k}\u0000${tags[k]}\u0000`
  let found = labelArrays.get(key)
  if (found === undefined) {
    found = Object.entries(tags).map(([k, v]) => MetricLabel.make(k, v))
    labelArrays.set(key, found)
  }
  return found
}

/**
 * `2xx`, `4xx`… of a status.
 *
 * @since 0.1.0
 * @category labels
 */
export const statusClass = (status: number): string => `${Math.floor(status / 100)}xx`

const fixedRoutes = ["/metrics", "/docs", "/connect", "/oauth", "/healthz", "/livez", "/readyz", "/mcp"]

/**
 * The `route` label of a path: the contract's template, a fixed page's prefix, or `unmatched`
 * (an unknown path is never a label of its own).
 *
 * @since 0.1.0
 * @category labels
 */
export const routeOf = (url: string): string => {
  const q = url.indexOf("?")
  const path = q < 0 ? url : url.slice(0, q)
  let route = routesOfPaths.get(path)
  if (route === undefined) {
    route = templateOf(path)
    routesOfPaths.set(path, route)
  }
  return route
}

/** The route of the paths seen lately: a client reads the same few paths again and again. */
const routesOfPaths = new Lru<string>(10_000)

const templateOf = (path: string): string => {
  const found = Routes.template(path)
  if (found !== undefined) return found
  if (path === "/v1/openapi.json") return path
  for (const prefix of fixedRoutes) {
    if (path === prefix || path.startsWith(`${prefix}/`)) return prefix
  }
  return "unmatched"
}

const methods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

/**
 * Records one HTTP response.
 *
 * @since 0.1.0
 * @category recording
 */
export const recordHttp = (method: string, url: string, status: number, seconds: number): void => {
  if (!on) return
  const route = routeOf(url)
  const m = methods.has(method) ? method : "OTHER"
  // every request records here: its label arrays by route, then method (and status class), with no key built
  let byRoute = httpLabels.get(route)
  if (byRoute === undefined) {
    byRoute = new Map()
    httpLabels.set(route, byRoute)
  }
  let byMethod = byRoute.get(m)
  if (byMethod === undefined) {
    byMethod = { duration: labels({ route, method: m }), requests: new Map() }
    byRoute.set(m, byMethod)
  }
  const klass = Math.floor(status / 100)
  let requests = byMethod.requests.get(klass)
  if (requests === undefined) {
    requests = labels({ route, method: m, status_class: statusClass(status) })
    byMethod.requests.set(klass, requests)
  }
  metrics.httpRequests.unsafeUpdate(1, requests)
  metrics.httpDuration.unsafeUpdate(seconds, byMethod.duration)
}

/** `recordHttp`'s label arrays: route → method → the duration's, and the count's by status class. */
const httpLabels = new Map<
  string,
  Map<string, {
    readonly duration: ReadonlyArray<MetricLabel.MetricLabel>
    readonly requests: Map<number, ReadonlyArray<MetricLabel.MetricLabel>>
  }>
>()

/**
 * The HTTP middleware: counts every response and times it (only installed when metrics are on).
 *
 * @since 0.1.0
 * @category middleware
 */
export const http: <E, R>(app: HttpApp.Default<E, R>) => HttpApp.Default<E, R> = HttpMiddleware.make((app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const started = performance.now()
    return Effect.onExit(app, (exit) =>
      Effect.sync(() => {
        const status = exit._tag === "Success"
          ? exit.value.status
          : HttpServerError.causeResponseStripped(exit.cause)[0].status
        recordHttp(request.method, request.url, status, (performance.now() - started) / 1000)
      }))
  })
)

const outcomeOf = (error: unknown): string => {
  const tag = typeof error === "object" && error !== null ? (error as { _tag?: unknown })._tag : undefined
  if (typeof tag !== "string") return "error"
  const short = tag.slice(tag.lastIndexOf("/") + 1)
  // ProviderRateLimited → rate_limited; bounded by the ProviderError union
  return short.replace(/^Provider/, "").replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase()
}

/**
 * A provider port whose calls are counted by provider, state and outcome, and whose list reads
 * count their skipped rows by resource. The governor sees the call's provider and state.
 *
 * @since 0.1.0
 * @category wrappers
 */
export const port = (self: ProviderPort.Service): ProviderPort.Service =>
  PortCalls.wrap(self, (call, effect) => {
    if (!on) return effect
    const resource = typeof call.args[0] === "string" ? call.args[0] : undefined
    return Effect.tapBoth(effect, {
      onFailure: (error) =>
        Effect.sync(() =>
          metrics.upstreamRequests.unsafeUpdate(1, upstreamLabels(call.provider, call.state, outcomeOf(error)))
        ),
      onSuccess: (a) =>
        Effect.sync(() => {
          metrics.upstreamRequests.unsafeUpdate(1, upstreamLabels(call.provider, call.state, "ok"))
          const skipped = typeof a === "object" && a !== null ? (a as { skipped?: unknown }).skipped : undefined
          if (resource !== undefined && Array.isArray(skipped) && skipped.length > 0) {
            metrics.skippedRows.unsafeUpdate(skipped.length, labels({ provider: call.provider, resource }))
          }
        })
    })
  })

/** `port`'s label arrays: provider → state → outcome (every call records here, with no key built). */
const upstreamByProvider = new Map<string, Map<string, Map<string, ReadonlyArray<MetricLabel.MetricLabel>>>>()

const upstreamLabels = (provider: string, state: string, outcome: string): ReadonlyArray<MetricLabel.MetricLabel> => {
  let byState = upstreamByProvider.get(provider)
  if (byState === undefined) upstreamByProvider.set(provider, byState = new Map())
  let byOutcome = byState.get(state)
  if (byOutcome === undefined) byState.set(state, byOutcome = new Map())
  let found = byOutcome.get(outcome)
  if (found === undefined) byOutcome.set(outcome, found = labels({ provider, state, outcome }))
  return found
}

const providerOfKey = (key: string) => key.split("|")[0] ?? "unknown"

/**
 * A rate governor whose waits are timed and whose upstream 429s (with or without `Retry-After`) are
 * counted.
 *
 * @since 0.1.0
 * @category wrappers
 */
export const governor = (self: UpstreamGovernor.Service, timed = true): UpstreamGovernor.Service => {
  /** A wait of the governor's, observed in the wait histogram. */
  const observed = (key: string, wait: Effect.Effect<void>): Effect.Effect<void> =>
    !on || !timed ? wait : Effect.suspend(() => {
      const started = performance.now()
      return Effect.ensuring(
        wait,
        Effect.sync(() =>
          metrics.upstreamGovernorWait.unsafeUpdate(
            (performance.now() - started) / 1000,
            labels({ provider: providerOfKey(key) })
          )
        )
      )
    })
  return {
    take: (key, policy) => observed(key, self.take(key, policy)),
    // an interactive caller's admission is no wait: it is not observed
    admit: (key, policy) =>
      Effect.flatMap(
        UpstreamGovernor.isBackground,
        (background) => background ? observed(key, self.admit(key, policy)) : Effect.void
      ),
    pause: self.pause,
    throttled: (key, retryAfter) =>
      Effect.zipRight(
        on
          ? Effect.flatMap(FiberRef.get(PortCalls.current), (context) =>
            Effect.sync(() =>
              metrics.upstreamRateLimited.unsafeUpdate(
                1,
                labels({ provider: context?.provider ?? providerOfKey(key), state: context?.state ?? "unknown" })
              )
            ))
          : Effect.void,
        self.throttled(key, retryAfter)
      )
  }
}

/**
 * Counts a provider call that failed with `ProviderTimeout`: the request's upstream deadline
 * passed (the adapter saw it and gave up, or the call was cut).
 *
 * @since 0.1.0
 * @category recording
 */
export const recordDeadlineExceeded = (provider: string) => (error: unknown): Effect.Effect<void> =>
  Effect.sync(() => {
    if (on && outcomeOf(error) === "timeout") metrics.upstreamDeadlineExceeded.unsafeUpdate(1, labels({ provider }))
  })

/**
 * A sync store that counts pages stored (by phase), failed reads (`failing_since` or an `error`
 * status written) and takeovers.
 *
 * @since 0.1.0
 * @category wrappers
 */
export const syncStore = (self: SyncStore.Service): SyncStore.Service => ({
  ...self,
  apply: (input) =>
    Effect.tap(self.apply(input), () =>
      Effect.sync(() => {
        if (!on) return
        const phase = input.cursor.status === "live" && input.cursor.page === undefined ? "poll" : "backfill"
        metrics.syncPages.unsafeUpdate(1, labels({ phase }))
      })),
  updateFacility: (connectionId, facilityId, set) =>
    Effect.tap(self.updateFacility(connectionId, facilityId, set), () =>
      Effect.sync(() => {
        if (on && typeof set.last_error === "string") metrics.syncPollFailures.unsafeUpdate(1, [])
      })),
  claimStalled: (staleBefore, now, limit) =>
    Effect.tap(self.claimStalled(staleBefore, now, limit), (taken) =>
      Effect.sync(() => {
        if (on && taken.length > 0) metrics.syncTakeovers.unsafeUpdate(taken.length, [])
      }))
})

/**
 * Records one webhook delivery attempt and where it left the delivery.
 *
 * @since 0.1.0
 * @category recording
 */
export const recordWebhookAttempt = (
  outcome: "succeeded" | "retrying" | "failed" | "abandoned",
  seconds: number
): void => {
  if (!on) return
  metrics.webhookAttempts.unsafeUpdate(1, [])
  metrics.webhookDeliveries.unsafeUpdate(1, labels({ outcome }))
  metrics.webhookAttemptDuration.unsafeUpdate(seconds, [])
}

/**
 * Counts request log entries that were not stored (`RequestLogCapture.ts`).
 *
 * @since 0.1.0
 * @category recording
 */
export const recordRequestLogDropped = (n: number, reason: "queue_full" | "shutdown" | "write_failed"): void => {
  if (on) metrics.requestLogDropped.unsafeUpdate(n, labels({ reason }))
}

const facilityStatuses = ["backfilling", "live", "error"]

let loopDelay: ReturnType<typeof monitorEventLoopDelay> | undefined

/**
 * Turns recording on and starts the event-loop delay monitor, until the returned function is
 * called (the metrics layer does, for its lifetime; layers up at once are counted).
 *
 * @since 0.1.0
 * @category state
 */
export const start = (): () => void => {
  if (layers++ === 0) {
    on = true
    loopDelay = monitorEventLoopDelay({ resolution: 20 })
    loopDelay.enable()
    metrics.startTime.unsafeUpdate(Math.round(Date.now() / 1000 - process.uptime()), [])
  }
  let stopped = false
  return () => {
    if (stopped) return
    stopped = true
    if (--layers === 0) {
      on = false
      loopDelay?.disable()
      loopDelay = undefined
    }
  }
}

/**
 * Sets the gauges of a scrape: the database's snapshot (`MetricsStore`) and the process's.
 *
 * @since 0.1.0
 * @category recording
 */
export const recordSnapshot = (snapshot: Snapshot, now: number, ready: boolean): void => {
  metrics.ready.unsafeUpdate(ready ? 1 : 0, [])
  for (const status of facilityStatuses) {
    metrics.syncFacilities.unsafeUpdate(snapshot.facilities[status] ?? 0, labels({ status }))
  }
  metrics.syncLag.unsafeUpdate(
    snapshot.oldestLiveSync === null ? 0 : Math.max(0, (now - snapshot.oldestLiveSync) / 1000),
    []
  )
  metrics.webhookPending.unsafeUpdate(snapshot.deliveries.pending ?? 0, [])
  metrics.webhookOldestPending.unsafeUpdate(
    snapshot.oldestPending === null ? 0 : Math.max(0, (now - snapshot.oldestPending) / 1000),
    []
  )
  metrics.webhookDeadLettered.unsafeUpdate(snapshot.deliveries.failed ?? 0, [])
  const memory = process.memoryUsage()
  metrics.heapUsed.unsafeUpdate(memory.heapUsed, [])
  metrics.heapTotal.unsafeUpdate(memory.heapTotal, [])
  metrics.resident.unsafeUpdate(memory.rss, [])
  metrics.up.unsafeUpdate(1, [])
  if (loopDelay !== undefined && loopDelay.count > 0) {
    metrics.eventLoopLag.unsafeUpdate(loopDelay.percentile(50) / 1e9, labels({ quantile: "0.5" }))
    metrics.eventLoopLag.unsafeUpdate(loopDelay.percentile(99) / 1e9, labels({ quantile: "0.99" }))
    metrics.eventLoopLag.unsafeUpdate(loopDelay.max / 1e9, labels({ quantile: "1" }))
    loopDelay.reset()
  }
}
