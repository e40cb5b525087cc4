/**
 * The dashboard's internal API (`DashboardApi`, issue #33, ADR 0026) on the server: the session
 * cookie's middleware (with the CSRF check of every change), the groups' handlers, and the
 * `/dashboard` pages (the app built by `@tracebridge/dashboard`, under a strict CSP).
 *
 * The groups are attached to the same router as `/v1`, so the request middleware of `Http.ts`
 * (request ids, the body limits, the rate limit, the error envelope) covers them too; they are not
 * part of `Api`, so they are in neither the OpenAPI document nor the SDK.
 *
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { DashboardApi } from "@tracebridge/api"
import { Effect, Layer, Option, Redacted } from "effect"
import * as Errors from "../Errors.js"
import * as ConnectionStore from "../persistence/ConnectionStore.js"
import * as PublicOrigin from "../PublicOrigin.js"
import * as Connections from "../services/Connections.js"
import * as Dashboard from "../services/Dashboard.js"
import * as DashboardHealth from "../services/DashboardHealth.js"
import * as DashboardTools from "../services/DashboardTools.js"
import * as Oidc from "../services/Oidc.js"
import * as RequestLog from "../services/RequestLog.js"
import * as DashboardPages from "./DashboardPages.js"

const { CurrentSession, DashboardSession, SESSION_COOKIE } = DashboardApi

/** The cookie's path: the pages and their API. */
const COOKIE_PATH = "/dashboard"

/** Reads a cookie the browser sent (the request's parsed cookies). */
const cookieOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => request.cookies[SESSION_COOKIE]

/** Sets (or, with undefined, clears) the session cookie on the response of this request. */
const setSessionCookie = (value: string | undefined, secure: boolean) =>
  HttpApp.appendPreResponseHandler((_request, response) =>
    Effect.succeed(
      HttpServerResponse.unsafeSetCookie(response, SESSION_COOKIE, value ?? "", {
        httpOnly: true,
        sameSite: "lax",
        secure,
        path: COOKIE_PATH,
        ...(value === undefined
          ? { maxAge: 0, expires: new Date(0) }
          : { maxAge: `${Dashboard.SESSION_TTL_MS} millis` })
      })
    )
  )

/**
 * The session cookie's check (`DashboardSession`): the session must exist and be current, its
 * member still a member; any method but GET and HEAD also needs `X-CSRF-Token`.
 */
const SessionLive = Layer.effect(
  DashboardSession,
  Effect.map(Dashboard.Dashboard, (dashboard) =>
    DashboardSession.of({
      cookie: (value) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          dashboard.authenticate(
            Redacted.value(value),
            request.method !== "GET" && request.method !== "HEAD",
            request.headers[DashboardApi.CSRF_HEADER]
          ))
    }))
)

/** Whether this request's public origin is https (then the cookie is `Secure`). */
const secureOf = (request: HttpServerRequest.HttpServerRequest, publicUrl: Option.Option<string>) =>
  PublicOrigin.of(request, publicUrl).startsWith("https://")

const addressOf = (request: HttpServerRequest.HttpServerRequest) =>
  Option.getOrElse(request.remoteAddress, () => "unknown")

const SessionGroupLive = HttpApiBuilder.group(
  DashboardApi.DashboardApi,
  "session",
  (handlers) =>
    Effect.gen(function*() {
      const dashboard = yield* Dashboard.Dashboard
      const oidc = yield* Oidc.Oidc
      const publicUrl = yield* Effect.orDie(PublicOrigin.configured)
      return handlers
        .handle("signIn", ({ payload, request }) =>
          Effect.gen(function*() {
            const opened = yield* dashboard.signIn(payload, addressOf(request), cookieOf(request))
            yield* setSessionCookie(opened.sessionId, secureOf(request, publicUrl))
            return opened.me
          }))
        .handle("acceptInvitation", ({ payload, request }) =>
          Effect.gen(function*() {
            const opened = yield* dashboard.acceptInvitation(payload, addressOf(request), cookieOf(request))
            yield* setSessionCookie(opened.sessionId, secureOf(request, publicUrl))
            return opened.me
          }))
        .handle("sso", () => Effect.succeed({ enabled: oidc.enabled }))
        .handle("ssoStart", ({ request }) =>
          Effect.map(oidc.start(PublicOrigin.of(request, publicUrl)), ({ state, url }) =>
            HttpServerResponse.unsafeSetCookie(
              HttpServerResponse.redirect(url, { status: 302, headers: { "cache-control": "no-store" } }),
              Oidc.STATE_COOKIE,
              state,
              {
                httpOnly: true,
                sameSite: "lax",
                secure: secureOf(request, publicUrl),
                path: Oidc.STATE_COOKIE_PATH,
                maxAge: `${Oidc.STATE_TTL_MS} millis`
              }
            )))
        .handle("ssoCallback", ({ payload, request }) =>
          Effect.gen(function*() {
            const secure = secureOf(request, publicUrl)
            // the state works once, whatever comes next
            yield* HttpApp.appendPreResponseHandler((_request, response) =>
              Effect.succeed(
                HttpServerResponse.unsafeSetCookie(response, Oidc.STATE_COOKIE, "", {
                  httpOnly: true,
                  sameSite: "lax",
                  secure,
                  path: Oidc.STATE_COOKIE_PATH,
                  maxAge: 0,
                  expires: new Date(0)
                })
              )
            )
            const identity = yield* oidc.callback(payload.query, request.cookies[Oidc.STATE_COOKIE])
            const opened = yield* dashboard.signInFederated(identity, cookieOf(request))
            yield* setSessionCookie(opened.sessionId, secure)
            return opened.me
          }))
        .handle("me", () =>
          Effect.flatMap(CurrentSession, dashboard.me))
        .handle("switchOrganisation", ({ payload }) =>
          Effect.flatMap(CurrentSession, (session) =>
            dashboard.switchOrganisation(session, payload.organisation_id)))
        .handle("signOut", ({ request }) =>
          Effect.gen(function*() {
            yield* dashboard.signOut(yield* CurrentSession)
            yield* setSessionCookie(undefined, secureOf(request, publicUrl))
          }))
    })
)

const TotpGroupLive = HttpApiBuilder.group(
  DashboardApi.DashboardApi,
  "totp",
  (handlers) =>
    Effect.map(Dashboard.Dashboard, (dashboard) =>
      handlers
        .handle("enrol", () => Effect.flatMap(CurrentSession, dashboard.totpEnrol))
        .handle("confirm", ({ payload }) =>
          Effect.flatMap(
            CurrentSession,
            (session) => Effect.as(dashboard.totpConfirm(session, payload.code), { totp_enabled: true })
          ))
        .handle("disable", ({ payload }) =>
          Effect.flatMap(
            CurrentSession,
            (session) => Effect.as(dashboard.totpDisable(session, payload.code), { totp_enabled: false })
          )))
)

const TeamGroupLive = HttpApiBuilder.group(DashboardApi.DashboardApi, "team", (handlers) =>
  Effect.gen(function*() {
    const dashboard = yield* Dashboard.Dashboard
    const publicUrl = yield* Effect.orDie(PublicOrigin.configured)
    return handlers
      .handle("members", () =>
        Effect.flatMap(CurrentSession, (session) => Effect.map(dashboard.members(session), (data) => ({ data }))))
      .handle("invite", ({ payload, request }) =>
        Effect.flatMap(
          CurrentSession,
          (session) =>
            dashboard.invite(session, payload, PublicOrigin.of(request, publicUrl))
        ))
      .handle("changeRole", ({ path, payload }) =>
        Effect.flatMap(CurrentSession, (session) =>
          dashboard.changeRole(session, path.user_id, payload.role)))
      .handle("removeMember", ({ path }) =>
        Effect.flatMap(CurrentSession, (session) =>
          dashboard.removeMember(session, path.user_id)))
      .handle("audit", ({ urlParams }) =>
        Effect.flatMap(
          CurrentSession,
          (session) =>
            dashboard.audit(session, urlParams.page ?? 1, urlParams.per_page ?? 25)
        ))
      .handle("ssoDomains", () =>
        Effect.flatMap(CurrentSession, (session) =>
          Effect.map(dashboard.ssoDomains(session), (data) => ({ data }))))
      .handle("addSsoDomain", ({ payload }) =>
        Effect.flatMap(CurrentSession, (session) =>
          dashboard.addSsoDomain(session, payload)))
      .handle("removeSsoDomain", ({ path }) =>
        Effect.flatMap(CurrentSession, (session) =>
          dashboard.removeSsoDomain(session, path.domain)))
  }))

const KeysGroupLive = HttpApiBuilder.group(
  DashboardApi.DashboardApi,
  "keys",
  (handlers) =>
    Effect.map(Dashboard.Dashboard, (dashboard) =>
      handlers
        .handle(
          "list",
          () =>
            Effect.flatMap(CurrentSession, (session) => Effect.map(dashboard.listKeys(session), (data) => ({ data })))
        )
        .handle("create", () => Effect.flatMap(CurrentSession, dashboard.createKey))
        .handle("roll", ({ path, payload }) =>
          Effect.flatMap(
            CurrentSession,
            (session) => dashboard.rollKey(session, path.client_id, payload.expires_in_seconds)
          ))
        .handle(
          "revoke",
          ({ path }) => Effect.flatMap(CurrentSession, (session) => dashboard.revokeKey(session, path.client_id))
        ))
)

const LogsGroupLive = HttpApiBuilder.group(
  DashboardApi.DashboardApi,
  "logs",
  (handlers) =>
    Effect.map(RequestLog.RequestLog, (log) =>
      handlers
        .handle("list", ({ urlParams }) =>
          Effect.gen(function*() {
            const session = yield* CurrentSession
            const { cursor, limit, ...filters } = urlParams
            const page = yield* log.list(session.organisation_id, filters, cursor, limit ?? 50).pipe(
              Effect.catchTag("InvalidCursor", (error) =>
                Errors.fail("validation_error", "invalid_parameter", error.message, "cursor"))
            )
            return {
              data: page.items.map(({ organisation_id: _, ...entry }) =>
                entry
              ),
              next_cursor: page.next_cursor
            }
          }))
        .handle("get", ({ path }) =>
          Effect.gen(function*() {
            const session = yield* CurrentSession
            const found = yield* log.get(session.organisation_id, path.request_id)
            if (Option.isNone(found)) {
              return yield* Errors.fail(
                "not_found_error",
                "resource_not_found",
                `No request with id ${path.request_id}`
              )
            }
            const { organisation_id: _, ...entry } = found.value.entry
            return { ...entry, upstream: found.value.calls.map(({ request_id: _id, ...call }) => call) }
          })))
)

/** A stored connection as the Connections page shows it (no login, no sandbox state). */
const entryOf = (c: ConnectionStore.Connection) => ({
  id: c.id,
  external_id: c.external_id,
  provider: c.provider,
  state: c.state,
  status: c.status,
  is_sandbox: c.is_sandbox,
  created_at: c.created_at,
  updated_at: c.updated_at
})

const ConnectionsGroupLive = HttpApiBuilder.group(
  DashboardApi.DashboardApi,
  "connections",
  (handlers) =>
    Effect.gen(function*() {
      const store = yield* ConnectionStore.ConnectionStore
      const connections = yield* Connections.Connections
      const dashboard = yield* Dashboard.Dashboard
      const health = yield* DashboardHealth.DashboardHealth
      return handlers
        .handle("list", ({ urlParams }) =>
          Effect.gen(function*() {
            const session = yield* CurrentSession
            const { page: pageNumber, per_page, ...filters } = urlParams
            const page = pageNumber ?? 1
            const perPage = per_page ?? 25
            const { items, total } = yield* store.searchConnections(
              session.organisation_id,
              filters,
              (page - 1) * perPage,
              perPage
            )
            return {
              data: items.map(entryOf),
              page,
              per_page: perPage,
              total,
              has_more: (page - 1) * perPage + items.length < total
            }
          }))
        .handle("remove", ({ path }) =>
          Effect.gen(function*() {
            const session = yield* CurrentSession
            const principal = yield* dashboard.actAs(session, "developer", "Deleting a connection")
            // DELETE /v1/connections/{id}'s own code: another organisation's connection is 404
            yield* connections.remove(principal, path.connection_id)
            yield* dashboard.record(session, "connection.deleted", path.connection_id)
            const stored = yield* store.getConnection(path.connection_id)
            return entryOf(Option.getOrThrow(stored))
          }))
        .handle("get", ({ path }) =>
          Effect.flatMap(CurrentSession, (session) => health.connection(session, path.connection_id)))
        .handle("relink", ({ path }) =>
          Effect.flatMap(CurrentSession, (session) =>
            health.relink(session, path.connection_id)))
    })
)

const IssuesGroupLive = HttpApiBuilder.group(
  DashboardApi.DashboardApi,
  "issues",
  (handlers) =>
    Effect.map(
      DashboardHealth.DashboardHealth,
      (health) => handlers.handle("list", () => Effect.flatMap(CurrentSession, health.issues))
    )
)

const WebhooksGroupLive = HttpApiBuilder.group(
  DashboardApi.DashboardApi,
  "webhooks",
  (handlers) =>
    Effect.map(DashboardHealth.DashboardHealth, (health) =>
      handlers
        .handle("list", () => Effect.flatMap(CurrentSession, health.webhooks))
        .handle("deliveries", ({ path, urlParams }) =>
          Effect.flatMap(CurrentSession, (session) => health.deliveries(session, path.webhook_id, urlParams)))
        .handle("delivery", ({ path }) =>
          Effect.flatMap(CurrentSession, (session) =>
            health.delivery(session, path.delivery_id)))
        .handle("resend", ({ path }) =>
          Effect.flatMap(CurrentSession, (session) =>
            health.resend(session, path.delivery_id)))
        .handle("create", ({ payload }) =>
          Effect.flatMap(CurrentSession, (session) =>
            health.createWebhook(session, payload)))
        .handle("edit", ({ path, payload }) =>
          Effect.flatMap(CurrentSession, (session) =>
            health.editWebhook(session, path.webhook_id, payload)))
        .handle("rotateSecret", ({ path }) =>
          Effect.flatMap(CurrentSession, (session) =>
            health.rotateWebhookSecret(session, path.webhook_id)))
        .handle("disable", ({ path }) =>
          Effect.flatMap(CurrentSession, (session) =>
            health.setWebhookStatus(session, path.webhook_id, "disabled")))
        .handle("enable", ({ path }) =>
          Effect.flatMap(CurrentSession, (session) =>
            health.setWebhookStatus(session, path.webhook_id, "enabled")))
        .handle("test", ({ path }) =>
          Effect.flatMap(CurrentSession, (session) =>
            health.testWebhook(session, path.webhook_id)))
        .handle("allDeliveries", ({ urlParams }) =>
          Effect.flatMap(CurrentSession, (session) =>
            health.allDeliveries(session, urlParams)))
        .handle("resendFailed", ({ payload }) =>
          Effect.flatMap(CurrentSession, (session) =>
            health.resendFailed(session, payload))))
)

const OverviewGroupLive = HttpApiBuilder.group(
  DashboardApi.DashboardApi,
  "overview",
  (handlers) =>
    Effect.map(
      DashboardHealth.DashboardHealth,
      (health) => handlers.handle("get", () => Effect.flatMap(CurrentSession, health.overview))
    )
)

const ConnectGroupLive = HttpApiBuilder.group(
  DashboardApi.DashboardApi,
  "connect",
  (handlers) =>
    Effect.map(DashboardTools.DashboardTools, (tools) =>
      handlers
        .handle("settings", () => Effect.flatMap(CurrentSession, tools.connectSettings))
        .handle(
          "update",
          ({ payload }) => Effect.flatMap(CurrentSession, (session) => tools.updateConnectSettings(session, payload))
        )
        .handle("preview", () => Effect.flatMap(CurrentSession, tools.connectPreview)))
)

const SandboxGroupLive = HttpApiBuilder.group(
  DashboardApi.DashboardApi,
  "sandbox",
  (handlers) =>
    Effect.map(DashboardTools.DashboardTools, (tools) =>
      handlers
        .handle("options", () => Effect.flatMap(CurrentSession, tools.sandboxOptions))
        .handle(
          "create",
          ({ payload }) => Effect.flatMap(CurrentSession, (session) => tools.createSandboxConnection(session, payload))
        )
        .handle(
          "simulate",
          ({ path, payload }) =>
            Effect.flatMap(CurrentSession, (session) => tools.simulate(session, path.connection_id, payload))
        )
        .handle(
          "reset",
          ({ path }) => Effect.flatMap(CurrentSession, (session) => tools.reset(session, path.connection_id))
        )
        .handle(
          "fault",
          ({ path }) => Effect.flatMap(CurrentSession, (session) => tools.fault(session, path.connection_id))
        )
        .handle(
          "setFault",
          ({ path, payload }) =>
            Effect.flatMap(CurrentSession, (session) => tools.setFault(session, path.connection_id, payload))
        )
        .handle(
          "clearFault",
          ({ path }) => Effect.flatMap(CurrentSession, (session) => tools.clearFault(session, path.connection_id))
        ))
)

/**
 * The dashboard's pages (ADR 0028): `/dashboard`, `/dashboard/accept` and every client-side route
 * under `/dashboard/` (but `/dashboard/api/…`) answer the app built by `@tracebridge/dashboard`,
 * `/dashboard/assets/…` its files, all under a strict CSP (`DashboardPages.ts`). The build is read
 * once, at start; without one, `/dashboard` answers 503 saying how to build it.
 *
 * @since 0.1.0
 * @category layers
 */
export const PagesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const { app, asset } = DashboardPages.handlers(DashboardPages.read(DashboardPages.distDir()))
    yield* router.get("/dashboard", app)
    yield* router.get("/dashboard/assets/*", asset)
    yield* router.get("/dashboard/*", app)
  })
)

/**
 * The internal API's routes (every group, with the session middleware), as a layer for
 * `HttpApiBuilder.serve`, with the `Dashboard` service.
 *
 * @since 0.1.0
 * @category layers
 */
export const HttpDashboardLive = Layer.mergeAll(
  SessionGroupLive,
  TotpGroupLive,
  TeamGroupLive,
  KeysGroupLive,
  LogsGroupLive,
  ConnectionsGroupLive,
  IssuesGroupLive,
  WebhooksGroupLive,
  OverviewGroupLive,
  ConnectGroupLive,
  SandboxGroupLive
).pipe(
  Layer.provide(SessionLive),
  Layer.provide(Oidc.layer),
  Layer.provide(DashboardHealth.layer),
  Layer.provide(DashboardTools.layer),
  Layer.provide(Dashboard.layer)
)
