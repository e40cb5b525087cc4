/**
 * The dashboard's health pages on Postgres (issue #33), in a fresh schema of their own: a
 * connection's page (its facilities' sync, events, failed requests) and its relink, the Issues
 * feed (a connection in error, a lagging facility, failing and failed deliveries), the Webhooks
 * page (counts by outcome, deliveries by cursor and status, an attempt's redacted preview) with a
 * resend, and the Overview's counts. Runs with `npm run test:pg` (TEST_DATABASE_URL).
 */
import { assert, describe, it } from "@effect/vitest"
import { SyncStore } from "@tracebridge/sync"
import { Effect, Option, TestClock } from "effect"
import * as RequestLogCapture from "../src/RequestLogCapture.js"
import { WebhookDispatcher } from "../src/services/WebhookDispatcher.js"
import { invited, ownerWithKeyAs, raw } from "./support/Dashboard.js"
import { onFreshApp } from "./support/DashboardPg.js"
import { testDatabaseUrl } from "./support/PgSchema.js"
import { receiver } from "./support/Receiver.js"
import { call, linkSandbox } from "./support/TestApp.js"

const url = testDatabaseUrl("DashboardWebhooks.pg.test.ts")

const T0 = Date.parse("2026-01-15T12:00:00.000Z")

const flush = Effect.flatMap(
  Effect.serviceOption(RequestLogCapture.Capture),
  (capture) => Option.isSome(capture) ? capture.value.flush : Effect.dieMessage("the request log is off")
)

describe("Dashboard health pages (Postgres)", () => {
  it.scoped(
    "connection page and relink, issues, webhooks with previews and resend, overview",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const { access, dashboard, owner } = yield* ownerWithKeyAs("pg-owner@example.com")
        const developer = yield* invited(owner, "pg-developer@example.com", "developer")
        const linked = yield* linkSandbox(access)
        const id = linked.connection_id
        const hook = yield* receiver([503])
        hook.body = JSON.stringify({ message: "down", token: "receiver-secret-value" })
        hook.contentType = "application/json"
        const created = yield* call("POST", "/v1/webhooks/", {
          token: access,
          json: { url: hook.url, events: ["lab_result.received", "connection.login_required"] }
        })
        assert.strictEqual(created.status, 201)
        const webhookId = created.body.data.id as string
        for (let i = 0; i < 2; i++) {
          yield* call("POST", `/v1/sandbox/${id}/simulate`, {
            token: access,
            json: { scenario: "lab_result_received", params: {} }
          })
          yield* TestClock.adjust(1)
        }
        const sync = yield* SyncStore.SyncStore
        yield* sync.ensureFacility(id, "fac_lagging", T0)
        yield* sync.updateFacility(id, "fac_lagging", { status: "live", last_synced_at: T0 - 3_600_000 })
        yield* call("PUT", `/v1/sandbox/${id}/faults`, { token: access, json: { kind: "expired_login" } })
        assert.strictEqual((yield* call("GET", `/v1/connections/${id}/facilities`, { token: access })).status, 409)
        assert.strictEqual(yield* Effect.flatMap(WebhookDispatcher, (d) => d.runDue), 3)
        yield* flush

        // the connection's page
        const page = yield* dashboard.connections.get({ path: { connection_id: id } })
        assert.isTrue(page.connection.needs_relink)
        assert.strictEqual(page.failed_requests[0]?.status, 409)
        assert.isTrue(page.facilities.find((f) => f.facility_id === "fac_lagging")?.lagging)
        assert.strictEqual(page.events.length, 3)
        assert.isTrue(page.events.every((e) => e.delivery_status === "pending"))

        // issues: the connection, the lagging facility, the failing endpoint
        const issues = yield* dashboard.issues.list()
        assert.sameMembers(issues.data.map((i) => i.kind), [
          "connection_needs_relink",
          "sync_lagging",
          "webhook_failing"
        ])
        assert.strictEqual(issues.data.find((i) => i.kind === "webhook_failing")?.count, 3)

        // webhooks: counts, deliveries by cursor and status, the preview
        const listed = yield* dashboard.webhooks.list()
        assert.deepStrictEqual(listed.data[0]!.deliveries_24h, { succeeded: 0, failed: 0, retrying: 3, pending: 0 })
        const first = yield* dashboard.webhooks.deliveries({
          path: { webhook_id: webhookId },
          urlParams: { limit: 2 }
        })
        const second = yield* dashboard.webhooks.deliveries({
          path: { webhook_id: webhookId },
          urlParams: { limit: 2, cursor: first.next_cursor! }
        })
        assert.strictEqual(first.data.length + second.data.length, 3)
        assert.isNull(second.next_cursor)
        assert.deepStrictEqual(
          (yield* dashboard.webhooks.deliveries({
            path: { webhook_id: webhookId },
            urlParams: { status: "pending" }
          }))
            .data.length,
          3
        )
        const target = first.data[0]!
        const detail = yield* raw("GET", `/dashboard/api/deliveries/${target.id}`, { cookie: owner.cookie })
        assert.strictEqual(detail.body.attempt_log[0].status_code, 503)
        assert.include(detail.body.attempt_log[0].response_preview, "[REDACTED]")
        assert.notInclude(detail.text, "receiver-secret-value")

        // resend by a developer, once the receiver is fixed
        hook.script.splice(0, hook.script.length, 200)
        const resent = yield* raw("POST", `/dashboard/api/deliveries/${target.id}/resend`, {
          cookie: developer.cookie,
          csrf: developer.csrf
        })
        assert.strictEqual(resent.status, 200, resent.text)
        assert.strictEqual(yield* Effect.flatMap(WebhookDispatcher, (d) => d.runDue), 1)
        assert.strictEqual(
          (yield* dashboard.webhooks.delivery({ path: { delivery_id: target.id } })).status,
          "succeeded"
        )

        // relink
        const relink = yield* raw("POST", `/dashboard/api/connections/${id}/relink`, {
          cookie: developer.cookie,
          csrf: developer.csrf
        })
        assert.strictEqual(relink.status, 200, relink.text)
        assert.match(relink.body.link_token, /^link-sandbox-/)
        const audit = yield* dashboard.team.audit({ urlParams: {} })
        assert.includeMembers(audit.data.map((e) => e.action), [
          "webhook_delivery.resent",
          "connection.relink_started"
        ])

        // the overview
        const overview = yield* dashboard.overview.get()
        assert.deepStrictEqual(overview.connections, { active: 0, pending: 0, error: 1, inactive: 0 })
        assert.deepStrictEqual(overview.deliveries_24h, { succeeded: 1, failed: 0, retrying: 2, pending: 0 })
        assert.isAtLeast(overview.requests_24h["4xx"], 1)
        assert.isAtLeast(overview.requests_24h["2xx"], 1)
        const { client_error_rate, error_rate, total } = overview.requests_24h
        assert.strictEqual(error_rate, Math.round((overview.requests_24h["5xx"] / total) * 10_000) / 10_000)
        assert.strictEqual(client_error_rate, Math.round((overview.requests_24h["4xx"] / total) * 10_000) / 10_000)
        assert.isAbove(client_error_rate!, 0)
        assert.strictEqual(overview.open_issues, 3)
      }).pipe(onFreshApp(url, "dashboard_health")),
    { timeout: 120_000 }
  )
})
