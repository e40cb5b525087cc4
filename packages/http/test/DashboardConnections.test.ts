/**
 * The dashboard's Connections page API (issue #33): the organisation's connections, filtered by
 * status, provider, state and `external_id`, paged; another organisation's connections never
 * listed; every role reads it; an `external_id` holding markup comes back as a plain JSON string.
 * A connection's page (its facilities' sync, events and deliveries, failed requests), and its
 * relink (an update-mode link token, developer and up, audited), which closes its issue.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap, Http, Server } from "@tracebridge/http"
import { SyncStore } from "@tracebridge/sync"
import { Effect, Layer, Option, TestClock } from "effect"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import * as RequestLogCapture from "../src/RequestLogCapture.js"
import * as Crypto from "../src/services/Crypto.js"
import * as DashboardHealth from "../src/services/DashboardHealth.js"
import { firstOwner, invited, ownerWithKey, raw } from "./support/Dashboard.js"
import { call, linkSandbox } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

const app = Http.makeHttpLive({ worker: false }).pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

const MARKUP = `<script>alert("x")</script>`

/** Tests that use the sandbox's dates start on a realistic day. */
const T0 = Date.parse("2026-01-15T12:00:00.000Z")

const flush = Effect.flatMap(
  Effect.serviceOption(RequestLogCapture.Capture),
  (capture) => Option.isSome(capture) ? capture.value.flush : Effect.dieMessage("the request log is off")
)

/** Stores a connection directly, with an external id and a status no sandbox link gives. */
const insert = (organisationId: string, id: string, status: "error" | "pending", external_id: string, at: number) =>
  Effect.flatMap(ConnectionStore, (store) =>
    store.insertConnection({
      id,
      organisation_id: organisationId,
      provider: "provider_b",
      state: "HI",
      status,
      is_sandbox: true,
      external_id,
      credentials: null,
      key_id: null,
      token_issued: false,
      created_at: at,
      updated_at: at,
      sandbox_version: 0,
      sandbox_fault: null
    }))

describe("Dashboard connections", () => {
  it.scoped("lists the organisation's connections, filtered and paged, to every role", () =>
    Effect.gen(function*() {
      const { access, dashboard, owner } = yield* ownerWithKey
      const viewer = yield* invited(owner, "viewer@example.com", "viewer")
      const a = yield* linkSandbox(access, "provider_a", "CO")
      const b = yield* linkSandbox(access, "provider_a", "CO")
      const organisationId = (yield* dashboard.session.me()).organisation.id
      yield* insert(organisationId, "conn_markup", "error", MARKUP, Date.now() + 1_000)

      // another organisation's connection is never listed
      const orgB = yield* Bootstrap.createOrganisation("Organisation B")
      const ownerB = yield* firstOwner(orgB.id, "owner@b.example")
      yield* insert(orgB.id, "conn_other", "error", "other", Date.now())

      const all = yield* dashboard.connections.list({ urlParams: {} })
      assert.strictEqual(all.total, 3)
      // oldest first (two links within one millisecond are ordered by id)
      const linked = all.data.slice(0, 2).map((c) => c.id)
      assert.sameMembers(linked, [a.connection_id, b.connection_id])
      assert.strictEqual(all.data[2]!.id, "conn_markup")
      assert.isFalse(all.has_more)

      const errors = yield* dashboard.connections.list({ urlParams: { status: "error" } })
      assert.deepStrictEqual(errors.data.map((c) => c.id), ["conn_markup"])
      const byProvider = yield* dashboard.connections.list({ urlParams: { provider: "provider_a", state: "CO" } })
      assert.deepStrictEqual(byProvider.data.map((c) => c.id), linked)
      const none = yield* dashboard.connections.list({ urlParams: { state: "HI", status: "active" } })
      assert.strictEqual(none.total, 0)
      const byExternal = yield* dashboard.connections.list({ urlParams: { external_id: MARKUP } })
      assert.deepStrictEqual(byExternal.data.map((c) => c.id), ["conn_markup"])
      assert.strictEqual(byExternal.data[0]!.external_id, MARKUP)
      assert.strictEqual(byExternal.data[0]!.provider, "provider_b")

      const first = yield* dashboard.connections.list({ urlParams: { per_page: 2 } })
      assert.deepStrictEqual(first.data.map((c) => c.id), linked)
      assert.isTrue(first.has_more)
      const second = yield* dashboard.connections.list({ urlParams: { per_page: 2, page: 2 } })
      assert.deepStrictEqual(second.data.map((c) => c.id), ["conn_markup"])
      assert.isFalse(second.has_more)

      // the markup is a plain JSON string, served as JSON
      const plain = yield* raw("GET", `/dashboard/api/connections?external_id=${encodeURIComponent(MARKUP)}`, {
        cookie: viewer.cookie
      })
      assert.strictEqual(plain.status, 200)
      assert.include(String(plain.headers["content-type"]), "application/json")
      assert.include(plain.text, JSON.stringify(MARKUP).slice(1, -1))
      assert.strictEqual(plain.body.data[0].external_id, MARKUP)

      // the other organisation sees only its own
      const theirs = yield* raw("GET", "/dashboard/api/connections", { cookie: ownerB.cookie })
      assert.deepStrictEqual(theirs.body.data.map((c: { id: string }) => c.id), ["conn_other"])

      // bad filters: the error envelope, 400; no session: 401
      const bad = yield* raw("GET", "/dashboard/api/connections?status=broken", { cookie: owner.cookie })
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.body.error.type, "validation_error")
      const anonymous = yield* raw("GET", "/dashboard/api/connections")
      assert.strictEqual(anonymous.status, 401)
    }).pipe(Effect.provide(app)))

  it.scoped("deleting a connection runs /v1's delete: developer and up, audited, another organisation's is 404", () =>
    Effect.gen(function*() {
      const { access, dashboard, owner } = yield* ownerWithKey
      const viewer = yield* invited(owner, "viewer@example.com", "viewer")
      const developer = yield* invited(owner, "developer@example.com", "developer")
      const linked = yield* linkSandbox(access)
      const orgB = yield* Bootstrap.createOrganisation("Organisation B")
      yield* insert(orgB.id, "conn_other", "error", "other", Date.now())
      const path = `/dashboard/api/connections/${linked.connection_id}`

      // a viewer may not; without the CSRF token nobody may
      const refused = yield* raw("DELETE", path, { cookie: viewer.cookie, csrf: viewer.csrf })
      assert.strictEqual(refused.status, 403)
      assert.strictEqual(refused.body.error.type, "permission_error")
      const noCsrf = yield* raw("DELETE", path, { cookie: developer.cookie })
      assert.strictEqual(noCsrf.status, 403)
      const still = yield* call("GET", `/v1/connections/${linked.connection_id}`, { token: access })
      assert.strictEqual(still.body.data.status, "active")

      // another organisation's connection is not found, and untouched
      const other = yield* raw("DELETE", "/dashboard/api/connections/conn_other", {
        cookie: developer.cookie,
        csrf: developer.csrf
      })
      assert.strictEqual(other.status, 404)
      const otherStored = yield* Effect.flatMap(ConnectionStore, (store) => store.getConnection("conn_other"))
      assert.strictEqual(Option.getOrThrow(otherStored).status, "error")

      const deleted = yield* raw("DELETE", path, { cookie: developer.cookie, csrf: developer.csrf })
      assert.strictEqual(deleted.status, 200)
      assert.strictEqual(deleted.body.status, "inactive")
      const after = yield* call("GET", `/v1/connections/${linked.connection_id}`, { token: access })
      assert.strictEqual(after.body.data.status, "inactive")
      const audit = yield* dashboard.team.audit({ urlParams: {} })
      const entry = audit.data.find((e) => e.action === "connection.deleted")
      assert.isDefined(entry)
      assert.strictEqual(entry!.target, linked.connection_id)
      assert.strictEqual(entry!.actor, "developer@example.com")
    }).pipe(Effect.provide(app)))

  it.scoped(
    "a connection's page: facilities' sync, events and deliveries, failed requests; another's is 404",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const { access, dashboard, key, owner } = yield* ownerWithKey
        const viewer = yield* invited(owner, "viewer@example.com", "viewer")
        const linked = yield* linkSandbox(access)
        const id = linked.connection_id
        const hook = yield* call("POST", "/v1/webhooks/", {
          token: access,
          json: { url: "http://127.0.0.1:9/hooks", events: ["connection.login_required"] }
        })
        assert.strictEqual(hook.status, 201)

        // the managed sync's state, as the sync writes it: one facility live and current, one lagging
        const sync = yield* SyncStore.SyncStore
        const poll = 300_000
        yield* sync.ensureFacility(id, "fac_current", T0)
        yield* sync.updateFacility(id, "fac_current", { status: "live", last_synced_at: T0 - 1_000 })
        yield* sync.ensureFacility(id, "fac_lagging", T0)
        yield* sync.updateFacility(id, "fac_lagging", {
          status: "live",
          last_synced_at: T0 - (DashboardHealth.LAG_FACTOR + 1) * poll
        })

        // the state system refuses the login: a failed request, the connection in error, an event
        yield* call("PUT", `/v1/sandbox/${id}/faults`, { token: access, json: { kind: "expired_login" } })
        const failed = yield* call("GET", `/v1/connections/${id}/facilities`, { token: access })
        assert.strictEqual(failed.status, 409)
        yield* flush

        const page = yield* raw("GET", `/dashboard/api/connections/${id}`, { cookie: viewer.cookie })
        assert.strictEqual(page.status, 200, page.text)
        const { connection, events, facilities, failed_requests } = page.body
        assert.strictEqual(connection.id, id)
        assert.strictEqual(connection.status, "error")
        assert.isTrue(connection.needs_relink)
        assert.strictEqual(connection.environment, "sandbox")
        assert.strictEqual(connection.provider, "provider_a")
        assert.strictEqual(connection.state, "CO")
        assert.strictEqual(connection.last_error.source, "request")
        assert.strictEqual(connection.last_error.request_id, failed.headers["x-request-id"])
        assert.include(connection.last_error.message, "409")
        const byId = new Map<string, any>(facilities.map((f: any) => [f.facility_id, f]))
        assert.isFalse(byId.get("fac_current").lagging)
        assert.strictEqual(byId.get("fac_current").lag_ms, 1_000)
        assert.isTrue(byId.get("fac_lagging").lagging)
        assert.strictEqual(failed_requests[0].request_id, failed.headers["x-request-id"])
        assert.strictEqual(failed_requests[0].status, 409)
        assert.strictEqual(failed_requests[0].error_code, "connection_login_required")
        assert.isTrue(failed_requests.every((r: any) => r.status >= 400 && r.connection_id === id))
        assert.isAtMost(failed_requests.length, DashboardHealth.FAILED_REQUESTS)
        const loginRequired = events.find((e: any) => e.type === "connection.login_required")
        assert.isDefined(loginRequired, JSON.stringify(events))
        assert.strictEqual(loginRequired.delivery_status, "pending")
        assert.strictEqual(loginRequired.deliveries[0].webhook_id, hook.body.data.id)
        assert.notInclude(page.text, key.client_secret)

        // the Issues feed: the connection needs a relink, one facility lags
        const issues = yield* dashboard.issues.list()
        const relinkIssue = issues.data.find((i) => i.kind === "connection_needs_relink")
        assert.strictEqual(relinkIssue?.connection_id, id)
        assert.strictEqual(relinkIssue?.severity, "critical")
        const lagIssue = issues.data.find((i) => i.kind === "sync_lagging")
        assert.strictEqual(lagIssue?.facility_id, "fac_lagging")
        assert.isUndefined(issues.data.find((i) => i.facility_id === "fac_current"))
        assert.isTrue(issues.data.every((i, n) => n === 0 || i.since <= issues.data[n - 1]!.since), "newest first")

        // another organisation's connection, or none: 404
        const orgB = yield* Bootstrap.createOrganisation("Organisation B")
        const ownerB = yield* firstOwner(orgB.id, "owner@b.example")
        const hidden = yield* raw("GET", `/dashboard/api/connections/${id}`, { cookie: ownerB.cookie })
        assert.strictEqual(hidden.status, 404)
        assert.strictEqual(hidden.body.error.type, "not_found_error")
        assert.strictEqual(
          (yield* raw("GET", "/dashboard/api/connections/conn_nope", { cookie: owner.cookie })).status,
          404
        )
      }).pipe(Effect.provide(app)),
    { timeout: 120_000 }
  )

  it.scoped(
    "relink makes an update-mode link token: developer and up, CSRF, audited; a relink closes the issue",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const { access, dashboard, owner } = yield* ownerWithKey
        const viewer = yield* invited(owner, "viewer@example.com", "viewer")
        const developer = yield* invited(owner, "developer@example.com", "developer")
        const linked = yield* linkSandbox(access)
        const id = linked.connection_id
        yield* call("POST", `/v1/sandbox/${id}/simulate`, {
          token: access,
          json: { scenario: "connection_login_required" }
        })
        const path = `/dashboard/api/connections/${id}/relink`

        const byViewer = yield* raw("POST", path, { cookie: viewer.cookie, csrf: viewer.csrf })
        assert.strictEqual(byViewer.status, 403)
        assert.strictEqual(byViewer.body.error.type, "permission_error")
        const noCsrf = yield* raw("POST", path, { cookie: developer.cookie })
        assert.strictEqual(noCsrf.status, 403)
        assert.strictEqual(noCsrf.body.error.param, "x-csrf-token")
        const orgB = yield* Bootstrap.createOrganisation("Organisation B")
        const ownerB = yield* firstOwner(orgB.id, "owner@b.example")
        const other = yield* raw("POST", path, { cookie: ownerB.cookie, csrf: ownerB.csrf })
        assert.strictEqual(other.status, 404)

        const made = yield* raw("POST", path, { cookie: developer.cookie, csrf: developer.csrf })
        assert.strictEqual(made.status, 200, made.text)
        assert.match(made.body.link_token, /^link-sandbox-/)
        assert.strictEqual(made.body.expires_at, T0 + 4 * 3_600_000)
        // the token opens the Connect widget on this connection (update mode)
        const session = yield* call("GET", `/connect/session?link_token=${encodeURIComponent(made.body.link_token)}`)
        assert.strictEqual(session.status, 200, JSON.stringify(session.body))
        const audit = yield* dashboard.team.audit({ urlParams: {} })
        const entry = audit.data.find((e) => e.action === "connection.relink_started")
        assert.strictEqual(entry?.target, id)
        assert.strictEqual(entry?.actor, "developer@example.com")
        assert.notInclude(JSON.stringify(audit), made.body.link_token)
        assert.isDefined((yield* dashboard.issues.list()).data.find((i) => i.connection_id === id))

        // the login entered again (update mode without the widget): the issue closes itself
        const relinked = yield* call("POST", "/v1/sandbox/public_token/create", {
          token: access,
          json: { connection_id: id }
        })
        assert.strictEqual(relinked.status, 200)
        assert.isUndefined((yield* dashboard.issues.list()).data.find((i) => i.connection_id === id))
        assert.isFalse((yield* dashboard.connections.get({ path: { connection_id: id } })).connection.needs_relink)

        // a deleted connection cannot be relinked (/v1's own refusal)
        yield* dashboard.connections.remove({ path: { connection_id: id } })
        const gone = yield* raw("POST", path, { cookie: developer.cookie, csrf: developer.csrf })
        assert.strictEqual(gone.status, 409)
        assert.strictEqual(gone.body.error.code, "connection_inactive")
      }).pipe(Effect.provide(app)),
    { timeout: 120_000 }
  )
})
