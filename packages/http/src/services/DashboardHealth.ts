/**
 * What the dashboard shows about an organisation's health (issue #33, `docs/dashboard.md`): a
 * connection's page (the connection, its facilities' managed sync, its events and their
 * deliveries, its failed requests) and its relink, the Issues feed, the Webhooks page (endpoints,
 * deliveries, attempts with a preview of each answer) and its resend, and the Overview.
 *
 * Everything is read from what the API already keeps, through the services and stores that keep
 * it: `Connections.authorize` (another organisation's connection is 404), the sync's store, the
 * events service, the request log, the webhook store; the changes run `/v1`'s own code
 * (`Connections.createLinkToken` with `connection_id`, `Webhooks.retry`) as the member's
 * organisation (`Dashboard.actAs`), and are audited. Issues are computed at each call, from the
 * tables as they are, so an issue closes itself once its cause is gone; a missing vendor key
 * (`Catalog.vendorKeyConfig`) is read once at start, as the production ports read it. The
 * Overview's webhook backlog and sync lag are the metrics gauges' reads narrowed to the
 * organisation (`MetricsStore.organisationSnapshot`).
 *
 * @since 0.1.0
 */
import { DashboardApi } from "@tracebridge/api"
import { WebhookEvent } from "@tracebridge/core"
import { Catalog } from "@tracebridge/providers"
import { SyncStore } from "@tracebridge/sync"
import { Clock, Config, Context, Effect, Either, Layer, Option, Redacted, Schema } from "effect"
import * as Errors from "../Errors.js"
import { Accounts } from "../persistence/Accounts.js"
import type { Connection } from "../persistence/ConnectionStore.js"
import { ConnectionStore } from "../persistence/ConnectionStore.js"
import { DashboardStore } from "../persistence/DashboardStore.js"
import * as MetricsStore from "../persistence/MetricsStore.js"
import type { Summary } from "../persistence/RequestLogStore.js"
import { RequestLogStore } from "../persistence/RequestLogStore.js"
import type {
  DeliveryCursor,
  DeliveryOutcome,
  WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoint
} from "../persistence/WebhookStore.js"
import { WebhookStore } from "../persistence/WebhookStore.js"
import { Connections } from "./Connections.js"
import * as Crypto from "./Crypto.js"
import { Dashboard } from "./Dashboard.js"
import type { Failure } from "./Dashboard.js"
import { Events } from "./Events.js"
import * as ManagedSync from "./ManagedSync.js"
import { RequestLog } from "./RequestLog.js"
import { WebhookDispatcher } from "./WebhookDispatcher.js"
import { Webhooks } from "./Webhooks.js"

type SessionInfo = DashboardApi.SessionInfo
type ConnectionDetail = typeof DashboardApi.ConnectionDetail.Type
type Issue = typeof DashboardApi.Issue.Type
type DeliveryEntry = typeof DashboardApi.DeliveryEntry.Type
type DeliveryDetail = typeof DashboardApi.DeliveryDetail.Type
type LogEntry = typeof DashboardApi.LogEntry.Type
type WebhookEntry = typeof DashboardApi.WebhookEntry.Type
type WebhookSecret = typeof DashboardApi.WebhookSecret.Type

/**
 * A facility lags when its last sync is older than this many poll intervals (an issue, and
 * `lagging` on the connection's page).
 *
 * @since 0.1.0
 * @category constants
 */
export const LAG_FACTOR = 3

/** The most issues the feed lists. @since 0.1.0 @category constants */
export const MAX_ISSUES = 100

/** Failed requests on a connection's page, newest first. @since 0.1.0 @category constants */
export const FAILED_REQUESTS = 20

/** Events on a connection's page, newest first. @since 0.1.0 @category constants */
export const RECENT_EVENTS = 20

/**
 * How long a delivery that failed for good stays an issue (unless it is resent and succeeds).
 *
 * @since 0.1.0
 * @category constants
 */
export const FAILED_DELIVERY_WINDOW_MS = 7 * 86_400_000

const DAY_MS = 86_400_000

/**
 * The Overview's error rates: `part` of `total` as a share from 0 to 1, rounded to 4 places (a
 * percentage to 2); null when `total` is 0 (no request: no rate, rather than a rate of 0).
 *
 * @since 0.1.0
 * @category utils
 */
export const shareOf = (part: number, total: number): number | null =>
  total === 0 ? null : Math.round((part / total) * 10_000) / 10_000

/**
 * What a health call may fail with: the dashboard's own errors and those of `/v1`'s code it runs.
 *
 * @since 0.1.0
 * @category models
 */
export type HealthFailure = Failure | Errors.HttpError

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly connection: (session: SessionInfo, connectionId: string) => Effect.Effect<ConnectionDetail, HealthFailure>
  /** An update-mode link token for the connection (developer and up; audited `connection.relink_started`). */
  readonly relink: (
    session: SessionInfo,
    connectionId: string
  ) => Effect.Effect<typeof DashboardApi.RelinkToken.Type, HealthFailure>
  readonly issues: (session: SessionInfo) => Effect.Effect<typeof DashboardApi.IssuesPage.Type>
  readonly webhooks: (session: SessionInfo) => Effect.Effect<typeof DashboardApi.WebhookList.Type>
  readonly deliveries: (
    session: SessionInfo,
    webhookId: string,
    query: typeof DashboardApi.DeliveriesQuery.Type
  ) => Effect.Effect<typeof DashboardApi.DeliveryPage.Type, HealthFailure>
  readonly delivery: (session: SessionInfo, deliveryId: string) => Effect.Effect<DeliveryDetail, HealthFailure>
  /** Sends a delivery again, as `/v1`'s redelivery does (developer and up; audited `webhook_delivery.resent`). */
  readonly resend: (session: SessionInfo, deliveryId: string) => Effect.Effect<DeliveryDetail, HealthFailure>
  readonly overview: (session: SessionInfo) => Effect.Effect<typeof DashboardApi.Overview.Type>
  /** A new endpoint, through `POST /v1/webhooks`' code; its secret shown once (developer and up; audited `webhook.created`). */
  readonly createWebhook: (
    session: SessionInfo,
    body: typeof DashboardApi.WebhookCreate.Type
  ) => Effect.Effect<WebhookSecret, HealthFailure>
  /** Changes an endpoint's URL, events or description, through `PATCH /v1/webhooks/{id}`'s code (audited `webhook.updated`). */
  readonly editWebhook: (
    session: SessionInfo,
    webhookId: string,
    patch: typeof DashboardApi.WebhookEdit.Type
  ) => Effect.Effect<WebhookEntry, HealthFailure>
  /** A new signing secret, shown once; the old one signs beside it for 24 h (audited `webhook.secret_rotated`). */
  readonly rotateWebhookSecret: (session: SessionInfo, webhookId: string) => Effect.Effect<WebhookSecret, HealthFailure>
  /** Disables or enables an endpoint (audited `webhook.disabled`, `webhook.enabled`). */
  readonly setWebhookStatus: (
    session: SessionInfo,
    webhookId: string,
    status: "enabled" | "disabled"
  ) => Effect.Effect<WebhookEntry, HealthFailure>
  /** Sends the endpoint one signed `webhook.test` event now, and says what it met (audited `webhook.test_sent`). */
  readonly testWebhook: (
    session: SessionInfo,
    webhookId: string
  ) => Effect.Effect<typeof DashboardApi.WebhookTestResult.Type, HealthFailure>
  /** The deliveries across the organisation's endpoints, filtered, newest first, by cursor. */
  readonly allDeliveries: (
    session: SessionInfo,
    query: typeof DashboardApi.AllDeliveriesQuery.Type
  ) => Effect.Effect<typeof DashboardApi.DeliveryPage.Type, HealthFailure>
  /**
   * Every failed delivery made in a time range (of one endpoint, or all) due now again, at most
   * `MAX_RESEND_FAILED` (developer and up; audited `webhook_delivery.resent_failed`).
   */
  readonly resendFailed: (
    session: SessionInfo,
    body: typeof DashboardApi.ResendFailed.Type
  ) => Effect.Effect<typeof DashboardApi.ResendFailedResult.Type, HealthFailure>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class DashboardHealth extends Context.Tag("Services/DashboardHealth")<DashboardHealth, Service>() {}

/** A delivery cursor: base64url of `[created_at, id]` of the last delivery of a page. */
const CursorJson = Schema.parseJson(Schema.Tuple(Schema.Int, Schema.String))
const decodeCursor = Schema.decodeUnknownEither(CursorJson)
const encodeCursor = Schema.encodeSync(CursorJson)

const cursorAfter = (d: WebhookDelivery) =>
  Buffer.from(encodeCursor([d.created_at, d.id]), "utf8").toString("base64url")

const parseCursor = (cursor: string): Effect.Effect<DeliveryCursor, Errors.ValidationError> => {
  const decoded = /^[A-Za-z0-9_-]{1,400}$/.test(cursor)
    ? decodeCursor(Buffer.from(cursor, "base64url").toString("utf8"))
    : Either.left(undefined)
  return Either.isRight(decoded)
    ? Effect.succeed({ created_at: decoded.right[0], id: decoded.right[1] })
    : Errors.fail(
      "validation_error",
      "invalid_parameter",
      "The cursor is not one this list gave out; start from the first page",
      "cursor"
    )
}

const eventsOf = (endpoint: WebhookEndpoint): ReadonlyArray<string> => {
  const parsed: unknown = JSON.parse(endpoint.events)
  return Array.isArray(parsed) ? parsed.filter((e): e is string => typeof e === "string") : []
}

const noCounts = () => ({ succeeded: 0, failed: 0, retrying: 0, pending: 0 })

const deliveryEntry = (d: WebhookDelivery, attempts: ReadonlyArray<WebhookAttempt>): DeliveryEntry => {
  const own = attempts.filter((a) => a.delivery_id === d.id)
  const last = own.length === 0 ? undefined : own[own.length - 1]
  return {
    id: d.id,
    webhook_id: d.endpoint_id,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempts: d.attempts,
    last_status_code: last?.status_code ?? null,
    next_attempt_at: d.next_attempt_at,
    created_at: d.created_at,
    updated_at: d.updated_at
  }
}

const deliveryDetail = (d: WebhookDelivery, attempts: ReadonlyArray<WebhookAttempt>): DeliveryDetail => ({
  ...deliveryEntry(d, attempts),
  attempt_log: attempts.filter((a) => a.delivery_id === d.id).map((a) => ({
    attempt: a.n,
    at: a.at,
    duration_ms: a.duration_ms,
    status_code: a.status_code,
    error: a.error,
    response_preview: a.response_preview ?? null
  }))
})

const webhookEntry = (e: WebhookEndpoint, counts: Record<DeliveryOutcome, number> | undefined): WebhookEntry => ({
  id: e.id,
  url: e.url,
  events: eventsOf(e),
  description: e.description,
  status: e.status,
  created_at: e.created_at,
  deliveries_24h: counts ?? noCounts()
})

/** A creation time range whose end comes before its start is refused, naming the end. */
const checkRange = (from: number | undefined, to: number | undefined) =>
  from !== undefined && to !== undefined && to < from
    ? Errors.fail(
      "validation_error",
      "invalid_parameter",
      "created_to must not be before created_from (both are epoch milliseconds)",
      "created_to"
    )
    : Effect.void

const logEntry = ({ organisation_id: _, ...entry }: Summary): LogEntry => entry

const connectionName = (c: Pick<Connection, "id" | "external_id" | "provider" | "state">) =>
  `${c.external_id === null ? c.id : `${c.id} (${c.external_id})`}, ${c.provider} in ${c.state}`

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(
  DashboardHealth,
  Effect.gen(function*() {
    const dashboard = yield* Dashboard
    const connections = yield* Connections
    const connectionStore = yield* ConnectionStore
    const syncStore = yield* SyncStore.SyncStore
    const events = yield* Events
    const requestLog = yield* RequestLog
    const requestLogStore = yield* RequestLogStore
    const webhookStore = yield* WebhookStore
    const webhooks = yield* Webhooks
    const dashboardStore = yield* DashboardStore
    const accounts = yield* Accounts
    const dispatcher = yield* WebhookDispatcher
    const metricsStore = yield* MetricsStore.MetricsStore
    const pollIntervalMs = (yield* Effect.orDie(ManagedSync.settings)).pollIntervalMs
    const lagLimit = LAG_FACTOR * pollIntervalMs
    // The providers whose vendor key this API runs without, read once as their production ports
    // read it (at start): their production connections are issues until the API runs with it.
    const missingVendorKeys = new Map<string, string>()
    for (const { config, provider } of Catalog.vendorKeyConfig) {
      const key = yield* Config.option(Config.redacted(config)).pipe(Effect.orElseSucceed(() => Option.none()))
      if (Option.isNone(key) || Redacted.value(key.value).trim() === "") missingVendorKeys.set(provider, config)
    }

    const notFound = (what: string, id: string) =>
      Errors.fail("not_found_error", "resource_not_found", `No ${what} with id ${id}`)

    /** One of the organisation's endpoints; another organisation's is 404. */
    const endpointOf = (session: SessionInfo, id: string) =>
      Effect.flatMap(
        webhookStore.getWebhookEndpoint(id),
        (found) =>
          Option.isSome(found) && found.value.organisation_id === session.organisation_id
            ? Effect.succeed(found.value)
            : notFound("webhook", id)
      )

    /** One of the organisation's deliveries; another organisation's is 404. */
    const deliveryOf = (session: SessionInfo, id: string) =>
      Effect.flatMap(
        webhookStore.getWebhookDelivery(id),
        (found) =>
          Option.isSome(found) && found.value.organisation_id === session.organisation_id
            ? Effect.succeed(found.value)
            : notFound("delivery", id)
      )

    /** An endpoint as the Webhooks page lists it, read now with its last day's counts. */
    const entryNow = (session: SessionInfo, webhookId: string) =>
      Effect.gen(function*() {
        const endpoint = yield* endpointOf(session, webhookId)
        const now = yield* Clock.currentTimeMillis
        const { perEndpoint } = yield* countsOf([endpoint.id], now - DAY_MS)
        return webhookEntry(endpoint, perEndpoint.get(endpoint.id))
      })

    /** The organisation's endpoints' ids, or the one named (another organisation's is 404). */
    const endpointIdsOf = (session: SessionInfo, webhookId: string | undefined) =>
      webhookId === undefined
        ? Effect.map(webhookStore.listWebhookEndpoints(session.organisation_id), (es) => es.map((e) => e.id))
        : Effect.map(endpointOf(session, webhookId), (e) => [e.id])

    /** The connection's newest failed requests (4xx and 5xx), at most `FAILED_REQUESTS`. */
    const failedRequests = (organisationId: string, connectionId: string) =>
      Effect.map(
        Effect.all(
          (["4xx", "5xx"] as const).map((status_class) =>
            Effect.orDie(requestLog.list(organisationId, { status_class, connection_id: connectionId }, undefined, 20))
          )
        ),
        (pages) =>
          pages.flatMap((p) => p.items).sort((a, b) =>
            b.at - a.at || (a.request_id < b.request_id ? 1 : a.request_id > b.request_id ? -1 : 0)
          ).slice(0, FAILED_REQUESTS).map(logEntry)
      )

    const issuesOf = (organisationId: string, now: number) =>
      Effect.gen(function*() {
        const issues: Array<Issue> = []
        // connections whose login the state system refused: a relink is what they need
        const broken = yield* dashboardStore.connectionsInError(organisationId, MAX_ISSUES + 1)
        for (const c of broken) {
          issues.push({
            id: `connection_needs_relink:${c.id}`,
            kind: "connection_needs_relink",
            severity: "critical",
            message: `The state system refused the stored login of connection ${connectionName(c)}; its reads fail`,
            action: "Open the connection and relink it: its user enters the login again in the Connect widget",
            connection_id: c.id,
            facility_id: null,
            webhook_id: null,
            count: null,
            since: c.updated_at
          })
        }
        // production connections of a provider whose vendor key is missing: an operator must set it
        const keyless = yield* dashboardStore.productionConnections(
          organisationId,
          [...missingVendorKeys.keys()],
          MAX_ISSUES + 1
        )
        for (const c of keyless) {
          const config = missingVendorKeys.get(c.provider)!
          issues.push({
            id: `vendor_key_missing:${c.id}`,
            kind: "vendor_key_missing",
            severity: "critical",
            message: `Connection ${
              connectionName(c)
            } cannot reach the state system: this Tracebridge runs without ${c.provider}'s vendor key (${config}), so its reads answer 503 provider_unavailable and no request is sent`,
            action:
              `Ask your Tracebridge operator to set ${config} (the integrator's vendor API key from the state system) in the API's environment and restart it; this issue closes once the API runs with it`,
            connection_id: c.id,
            facility_id: null,
            webhook_id: null,
            count: null,
            since: c.updated_at
          })
        }
        const brokenIds = new Set(broken.map((c) => c.id))
        // facilities whose sync fails, failed, or lags
        for (const f of yield* dashboardStore.syncProblems(organisationId, now - lagLimit, MAX_ISSUES + 1)) {
          // a refused login is already the connection's issue
          if (brokenIds.has(f.connection_id) && f.status === "error") continue
          const failed = f.status === "error" || f.failing_since !== null
          issues.push(
            failed
              ? {
                id: `sync_failed:${f.connection_id}:${f.facility_id}`,
                kind: "sync_failed",
                severity: f.status === "error" ? "critical" : "warning",
                message: `The sync of facility ${f.facility_id} of connection ${f.connection_id} is failing${
                  f.last_error === null ? "" : `: ${f.last_error}`
                }`,
                action:
                  "It retries on its own; if the state system is down, wait. If it persists, open the connection and check its login",
                connection_id: f.connection_id,
                facility_id: f.facility_id,
                webhook_id: null,
                count: null,
                since: f.failing_since ?? f.last_synced_at ?? f.updated_at
              }
              : {
                id: `sync_lagging:${f.connection_id}:${f.facility_id}`,
                kind: "sync_lagging",
                severity: "warning",
                message: `Facility ${f.facility_id} of connection ${f.connection_id} was last synced ${
                  Math.round((now - (f.last_synced_at ?? now)) / 60_000)
                } minutes ago, more than ${LAG_FACTOR} poll intervals`,
                action: "Check that the API's workers run (the sync scheduler) and that the state system answers",
                connection_id: f.connection_id,
                facility_id: f.facility_id,
                webhook_id: null,
                count: null,
                since: (f.last_synced_at ?? now) + pollIntervalMs
              }
          )
        }
        // webhook endpoints with deliveries that fail
        const endpoints = yield* webhookStore.listWebhookEndpoints(organisationId)
        const byId = new Map(endpoints.map((e) => [e.id, e]))
        const problems = yield* webhookStore.deliveryProblems(
          endpoints.map((e) => e.id),
          now - FAILED_DELIVERY_WINDOW_MS
        )
        for (const p of problems) {
          const endpoint = byId.get(p.endpoint_id)
          const url = endpoint?.url ?? p.endpoint_id
          issues.push(
            p.kind === "failed"
              ? {
                id: `webhook_deliveries_failed:${p.endpoint_id}`,
                kind: "webhook_deliveries_failed",
                severity: "critical",
                message: `${p.n} ${
                  p.n === 1 ? "delivery" : "deliveries"
                } to ${url} failed for good (every retry spent, or dead-lettered)`,
                action: "Fix the receiver, then resend the failed deliveries from the webhook's page",
                connection_id: null,
                facility_id: null,
                webhook_id: p.endpoint_id,
                count: p.n,
                since: p.since
              }
              : {
                id: `webhook_failing:${p.endpoint_id}`,
                kind: "webhook_failing",
                severity: "warning",
                message: `${p.n} ${p.n === 1 ? "delivery" : "deliveries"} to ${url} failed and ${
                  p.n === 1 ? "is" : "are"
                } being retried`,
                action: "Check the receiver: the attempts' answers are on the webhook's page",
                connection_id: null,
                facility_id: null,
                webhook_id: p.endpoint_id,
                count: p.n,
                since: p.since
              }
          )
        }
        issues.sort((a, b) => b.since - a.since || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        return { data: issues.slice(0, MAX_ISSUES), truncated: issues.length > MAX_ISSUES }
      })

    const countsOf = (endpointIds: ReadonlyArray<string>, since: number) =>
      Effect.map(webhookStore.deliveryOutcomes(endpointIds, since), (rows) => {
        const total = noCounts()
        const perEndpoint = new Map<string, Record<DeliveryOutcome, number>>()
        for (const row of rows) {
          const counts = perEndpoint.get(row.endpoint_id) ?? noCounts()
          counts[row.outcome] += row.n
          total[row.outcome] += row.n
          perEndpoint.set(row.endpoint_id, counts)
        }
        return { total, perEndpoint }
      })

    const service: Service = {
      connection: (session, connectionId) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(session, "viewer", "Reading a connection")
          // `/v1`'s own check: another organisation's connection is 404
          const c = yield* connections.authorize(principal, connectionId)
          const now = yield* Clock.currentTimeMillis
          const facilities = yield* Effect.forEach(yield* syncStore.facilities(c.id), (f) =>
            Effect.map(syncStore.resources(c.id, f.facility_id), (resources) => {
              const lag = f.last_synced_at === null ? null : Math.max(0, now - f.last_synced_at)
              return {
                facility_id: f.facility_id,
                status: f.status,
                backfilled_through: f.backfilled_through,
                last_synced_at: f.last_synced_at,
                lag_ms: lag,
                lagging: f.status === "live" && lag !== null && lag > lagLimit,
                failing_since: f.failing_since,
                last_error: f.last_error,
                resources: resources.filter((r) =>
                  r.generation === f.generation
                ).map((r) => ({
                  type: r.resource,
                  status: r.status,
                  count: r.count,
                  backfilled_through: r.backfilled_through,
                  last_synced_at: r.last_synced_at,
                  last_error: r.last_error
                }))
              }
            }))
          const recent = yield* events.list(principal, { page: 1, per_page: RECENT_EVENTS, connection_id: c.id })
          const failed = yield* failedRequests(session.organisation_id, c.id)
          const syncError = facilities
            .filter((f) => f.last_error !== null)
            .map((f) => ({
              at: f.failing_since ?? f.last_synced_at ?? c.updated_at,
              source: "sync" as const,
              message: f.last_error ?? "",
              request_id: null,
              facility_id: f.facility_id
            }))
          const requestError = failed.slice(0, 1).map((r) => ({
            at: r.at,
            source: "request" as const,
            message: `${r.method} ${r.route} answered ${r.status}${r.error_code === null ? "" : ` ${r.error_code}`}`,
            request_id: r.request_id,
            facility_id: null
          }))
          const lastError = [...requestError, ...syncError].sort((a, b) => b.at - a.at)[0] ?? null
          return {
            connection: {
              id: c.id,
              external_id: c.external_id,
              provider: c.provider,
              state: c.state,
              status: c.status,
              is_sandbox: c.is_sandbox,
              created_at: c.created_at,
              updated_at: c.updated_at,
              environment: c.is_sandbox ? "sandbox" : "production",
              needs_relink: c.status === "error",
              last_error: lastError
            },
            facilities,
            events: recent.items.map((e) => ({
              id: e.id,
              type: e.type,
              created_at: Date.parse(e.created_at),
              delivery_status: e.delivery.status,
              deliveries: e.delivery.endpoints
            })),
            failed_requests: failed
          }
        }),

      relink: (session, connectionId) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(session, "developer", "Relinking a connection")
          // POST /v1/link/token/create with connection_id: update mode, 404 for another organisation's
          const created = yield* connections.createLinkToken(principal, { connection_id: connectionId })
          const expiresAt = Date.parse(created.expires_at)
          yield* dashboard.record(session, "connection.relink_started", connectionId, { expires_at: expiresAt })
          return { link_token: created.link_token, expires_at: expiresAt }
        }),

      issues: (session) => Effect.flatMap(Clock.currentTimeMillis, (now) => issuesOf(session.organisation_id, now)),

      webhooks: (session) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const endpoints = yield* webhookStore.listWebhookEndpoints(session.organisation_id)
          const { perEndpoint } = yield* countsOf(endpoints.map((e) => e.id), now - DAY_MS)
          return { data: endpoints.map((e) => webhookEntry(e, perEndpoint.get(e.id))) }
        }),

      createWebhook: (session, body) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(session, "developer", "Creating a webhook endpoint")
          // POST /v1/webhooks' own code: the URL guard, the secret made, sealed and shown once
          const created = yield* webhooks.create(principal, body)
          yield* dashboard.record(session, "webhook.created", created.id, { events: created.events })
          return {
            webhook: yield* entryNow(session, created.id),
            secret: created.secret,
            previous_secret_expires_at: null
          }
        }),

      editWebhook: (session, webhookId, patch) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(session, "developer", "Editing a webhook endpoint")
          const changed = (["url", "events", "description"] as const).filter((k) => patch[k] !== undefined)
          if (changed.length === 0) {
            return yield* Errors.fail(
              "validation_error",
              "invalid_parameter",
              "Nothing to change: give url, events or description"
            )
          }
          // PATCH /v1/webhooks/{id}'s own code: another organisation's endpoint is 404
          yield* webhooks.update(principal, webhookId, patch)
          yield* dashboard.record(session, "webhook.updated", webhookId, {
            fields: changed,
            ...(patch.events === undefined ? {} : { events: patch.events })
          })
          return yield* entryNow(session, webhookId)
        }),

      rotateWebhookSecret: (session, webhookId) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(session, "developer", "Rotating a webhook endpoint's secret")
          const rotated = yield* webhooks.rotate(principal, webhookId)
          const endpoint = yield* endpointOf(session, webhookId)
          yield* dashboard.record(session, "webhook.secret_rotated", webhookId, {
            previous_secret_expires_at: endpoint.previous_expires_at
          })
          return {
            webhook: yield* entryNow(session, webhookId),
            secret: rotated.secret,
            previous_secret_expires_at: endpoint.previous_expires_at
          }
        }),

      setWebhookStatus: (session, webhookId, status) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(
            session,
            "developer",
            status === "enabled" ? "Enabling a webhook endpoint" : "Disabling a webhook endpoint"
          )
          yield* webhooks.update(principal, webhookId, { status })
          yield* dashboard.record(session, status === "enabled" ? "webhook.enabled" : "webhook.disabled", webhookId)
          return yield* entryNow(session, webhookId)
        }),

      testWebhook: (session, webhookId) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(session, "developer", "Sending a test event")
          // `/v1`'s ownership check: another organisation's endpoint is 404
          yield* webhooks.get(principal, webhookId)
          const endpoint = yield* endpointOf(session, webhookId)
          if (endpoint.status === "disabled") {
            return yield* Errors.fail(
              "conflict_error",
              "invalid_state_transition",
              "This endpoint is disabled: enable it to send it a test event"
            )
          }
          const now = yield* Clock.currentTimeMillis
          const envelope = WebhookEvent.envelope(Crypto.id("evt_test_"), now)
          const body = JSON.stringify({
            id: envelope.id,
            type: "webhook.test",
            created: envelope.created,
            api_version: WebhookEvent.API_VERSION,
            data: {
              webhook_id: endpoint.id,
              message: "A test event sent from the Tracebridge dashboard; it carries no data and is not retried"
            }
          })
          const result = yield* dispatcher.sendTest(endpoint, principal.organisation.plan, {
            id: envelope.id,
            type: "webhook.test",
            body
          })
          yield* dashboard.record(session, "webhook.test_sent", webhookId, {
            event_id: envelope.id,
            status_code: result.status_code
          })
          return {
            event_id: envelope.id,
            event_type: "webhook.test" as const,
            delivered: result.error === null,
            ...result
          }
        }),

      allDeliveries: (session, query) =>
        Effect.gen(function*() {
          yield* checkRange(query.created_from, query.created_to)
          const endpointIds = yield* endpointIdsOf(session, query.webhook_id)
          const after = query.cursor === undefined ? undefined : yield* parseCursor(query.cursor)
          const limit = query.limit ?? 25
          const rows = yield* webhookStore.searchDeliveries(
            endpointIds,
            {
              status: query.status,
              outcome: query.outcome,
              createdFrom: query.created_from,
              createdTo: query.created_to
            },
            after,
            limit + 1
          )
          const page = rows.slice(0, limit)
          const attempts = yield* webhookStore.listWebhookAttempts(page.map((d) => d.id))
          return {
            data: page.map((d) => deliveryEntry(d, attempts)),
            next_cursor: rows.length > limit ? cursorAfter(page[page.length - 1]!) : null
          }
        }),

      resendFailed: (session, body) =>
        Effect.gen(function*() {
          yield* dashboard.actAs(session, "developer", "Resending failed webhook deliveries")
          yield* checkRange(body.created_from, body.created_to)
          const endpointIds = yield* endpointIdsOf(session, body.webhook_id)
          const failed = yield* webhookStore.searchDeliveries(
            endpointIds,
            {
              status: "failed",
              createdFrom: body.created_from,
              createdTo: body.created_to
            },
            undefined,
            DashboardApi.MAX_RESEND_FAILED + 1
          )
          if (failed.length > DashboardApi.MAX_RESEND_FAILED) {
            return yield* Errors.fail(
              "validation_error",
              "invalid_parameter",
              `More than ${DashboardApi.MAX_RESEND_FAILED} failed deliveries were made in this range; ` +
                `one call resends at most ${DashboardApi.MAX_RESEND_FAILED}: narrow the range`,
              "created_from"
            )
          }
          const now = yield* Clock.currentTimeMillis
          // what `/v1`'s redelivery does to each, in one statement: due now, the same delivery and event id
          const queued = yield* webhookStore.retryFailedDeliveries(failed.map((d) => d.id), now)
          if (queued > 0) yield* dispatcher.wake
          yield* dashboard.record(session, "webhook_delivery.resent_failed", body.webhook_id ?? null, {
            created_from: body.created_from,
            created_to: body.created_to,
            queued
          })
          return {
            queued,
            created_from: body.created_from,
            created_to: body.created_to,
            webhook_id: body.webhook_id ?? null
          }
        }),

      deliveries: (session, webhookId, query) =>
        Effect.gen(function*() {
          const endpoint = yield* endpointOf(session, webhookId)
          const after = query.cursor === undefined ? undefined : yield* parseCursor(query.cursor)
          const limit = query.limit ?? 25
          const rows = yield* webhookStore.searchWebhookDeliveries(endpoint.id, query.status, after, limit + 1)
          const page = rows.slice(0, limit)
          const attempts = yield* webhookStore.listWebhookAttempts(page.map((d) => d.id))
          return {
            data: page.map((d) => deliveryEntry(d, attempts)),
            next_cursor: rows.length > limit ? cursorAfter(page[page.length - 1]!) : null
          }
        }),

      delivery: (session, deliveryId) =>
        Effect.gen(function*() {
          const delivery = yield* deliveryOf(session, deliveryId)
          return deliveryDetail(delivery, yield* webhookStore.listWebhookAttempts([delivery.id]))
        }),

      resend: (session, deliveryId) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(session, "developer", "Resending a webhook delivery")
          const delivery = yield* deliveryOf(session, deliveryId)
          // POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry's own code: due now, sent again
          yield* webhooks.retry(principal, delivery.endpoint_id, delivery.id)
          yield* dashboard.record(session, "webhook_delivery.resent", delivery.id, {
            webhook_id: delivery.endpoint_id,
            event_id: delivery.event_id,
            previous_status: delivery.status
          })
          const updated = Option.getOrElse(yield* webhookStore.getWebhookDelivery(delivery.id), () => delivery)
          return deliveryDetail(updated, yield* webhookStore.listWebhookAttempts([delivery.id]))
        }),

      overview: (session) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const organisation = yield* accounts.getOrganisation(session.organisation_id)
          const count = (status: Connection["status"]) =>
            Effect.map(
              connectionStore.searchConnections(session.organisation_id, { status }, 0, 0),
              (found) => found.total
            )
          const [active, pending, error, inactive] = yield* Effect.all([
            count("active"),
            count("pending"),
            count("error"),
            count("inactive")
          ])
          const counts = { total: 0, "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0 }
          for (const row of yield* requestLogStore.countsSince(session.organisation_id, now - DAY_MS)) {
            counts.total += row.n
            if (
              row.status_class === "2xx" || row.status_class === "3xx" || row.status_class === "4xx" ||
              row.status_class === "5xx"
            ) {
              counts[row.status_class] += row.n
            }
          }
          const requests = {
            ...counts,
            error_rate: shareOf(counts["5xx"], counts.total),
            client_error_rate: shareOf(counts["4xx"], counts.total)
          }
          const endpoints = yield* webhookStore.listWebhookEndpoints(session.organisation_id)
          const { total } = yield* countsOf(endpoints.map((e) => e.id), now - DAY_MS)
          const issues = yield* issuesOf(session.organisation_id, now)
          // the gauges' own reads, narrowed to the organisation
          const snapshot = yield* metricsStore.organisationSnapshot(session.organisation_id)
          const seconds = (s: number | null) => (s === null ? null : Math.floor(s))
          return {
            plan: Option.match(organisation, { onNone: () => "sandbox" as const, onSome: (o) => o.plan }),
            connections: { active, pending, error, inactive },
            requests_24h: requests,
            deliveries_24h: total,
            open_issues: issues.data.length,
            webhook_backlog: {
              pending: snapshot.deliveries.pending ?? 0,
              oldest_pending_seconds: seconds(MetricsStore.oldestPendingSeconds(snapshot, now)),
              dead_lettered: snapshot.deliveries.failed ?? 0
            },
            sync: {
              lag_seconds: seconds(MetricsStore.syncLagSeconds(snapshot, now)),
              live: snapshot.facilities.live ?? 0,
              backfilling: snapshot.facilities.backfilling ?? 0,
              failing: snapshot.failingFacilities
            }
          }
        })
    }
    return service
  })
)
