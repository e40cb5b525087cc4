/**
 * The dashboard's Overview (issue #33): the plan, the connections by status, the last 24 hours'
 * requests by status class (from the request log) with their error rate (5xx) and client error
 * rate (4xx), null with no request, and deliveries by outcome, the open issues, the
 * webhook backlog and the sync lag (the gauges' reads, narrowed: `support/OverviewFigures.ts`, also
 * run on Postgres); only the member's organisation's; every role reads it.
 */
import type { HttpClient } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap, Http, Server } from "@tracebridge/http"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import * as RequestLogCapture from "../src/RequestLogCapture.js"
import * as Crypto from "../src/services/Crypto.js"
import { WebhookDispatcher } from "../src/services/WebhookDispatcher.js"
import { clientFor, firstOwner, invited, type Member, ownerWithKey, raw } from "./support/Dashboard.js"
import { backlogAndLag } from "./support/OverviewFigures.js"
import { receiver } from "./support/Receiver.js"
import { call, linkSandbox } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

const app = Http.makeHttpLive({ worker: false }).pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

const T0 = Date.parse("2026-01-15T12:00:00.000Z")

const flush = Effect.flatMap(
  Effect.serviceOption(RequestLogCapture.Capture),
  (capture) => Option.isSome(capture) ? capture.value.flush : Effect.dieMessage("the request log is off")
)

const signInAgain = (member: Member): Effect.Effect<Member, unknown, HttpClient.HttpClient> =>
  Effect.map(
    raw("POST", "/dashboard/api/session", { json: { email: member.email, password: member.password } }),
    (answer): Member => ({ ...member, cookie: answer.cookie!, csrf: answer.body.csrf_token as string })
  )

describe("Dashboard overview", () => {
  it.scoped(
    "plan, connections by status, the last day's requests and deliveries, open issues",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const { access, dashboard, owner } = yield* ownerWithKey
        const viewer = yield* invited(owner, "viewer@example.com", "viewer")
        const a = yield* linkSandbox(access)
        const b = yield* linkSandbox(access)
        const c = yield* linkSandbox(access, "provider_b")
        yield* dashboard.connections.remove({ path: { connection_id: b.connection_id } })
        yield* call("POST", `/v1/sandbox/${a.connection_id}/simulate`, {
          token: access,
          json: { scenario: "connection_login_required" }
        })
        const hook = yield* receiver([200])
        yield* call("POST", "/v1/webhooks/", {
          token: access,
          json: { url: hook.url, events: ["lab_result.received"] }
        })
        yield* call("POST", `/v1/sandbox/${a.connection_id}/simulate`, {
          token: access,
          json: { scenario: "lab_result_received", params: {} }
        })
        yield* Effect.flatMap(WebhookDispatcher, (d) => d.runDue)
        assert.strictEqual((yield* call("GET", "/v1/connections/conn_nope", { token: access })).status, 404)
        // a read the state system answers with garbage: a 5xx
        yield* call("PUT", `/v1/sandbox/${c.connection_id}/faults`, { token: access, json: { kind: "malformed" } })
        const failed = yield* call("GET", `/v1/connections/${c.connection_id}/facilities`, { token: access })
        assert.isAtLeast(failed.status, 500, JSON.stringify(failed.body))
        yield* call("DELETE", `/v1/sandbox/${c.connection_id}/faults`, { token: access })
        yield* flush

        const answer = yield* raw("GET", "/dashboard/api/overview", { cookie: viewer.cookie })
        assert.strictEqual(answer.status, 200, answer.text)
        const overview = answer.body
        assert.strictEqual(overview.plan, "sandbox")
        assert.deepStrictEqual(overview.connections, { active: 1, pending: 0, error: 1, inactive: 1 })
        assert.deepStrictEqual(overview.deliveries_24h, { succeeded: 1, failed: 0, retrying: 0, pending: 0 })
        const requests = overview.requests_24h
        assert.isAtLeast(requests["2xx"], 5)
        assert.isAtLeast(requests["4xx"], 1)
        assert.isAtLeast(requests["5xx"], 1)
        assert.strictEqual(requests.total, requests["2xx"] + requests["3xx"] + requests["4xx"] + requests["5xx"])
        // the error rate: the share of 5xx; the client error rate: the share of 4xx (4 places)
        assert.strictEqual(requests.error_rate, Math.round((requests["5xx"] / requests.total) * 10_000) / 10_000)
        assert.strictEqual(requests.client_error_rate, Math.round((requests["4xx"] / requests.total) * 10_000) / 10_000)
        assert.isAbove(requests.error_rate, 0)
        assert.isBelow(requests.error_rate, 1)
        assert.isAbove(requests.client_error_rate, 0)
        const issues = yield* dashboard.issues.list()
        assert.strictEqual(overview.open_issues, issues.data.length)
        assert.isAtLeast(overview.open_issues, 1, "the connection in error")

        // another organisation sees its own: nothing
        const orgB = yield* Bootstrap.createOrganisation("Organisation B", "production")
        const ownerB = yield* firstOwner(orgB.id, "owner@b.example")
        const theirs = yield* raw("GET", "/dashboard/api/overview", { cookie: ownerB.cookie })
        assert.deepStrictEqual(theirs.body, {
          plan: "production",
          connections: { active: 0, pending: 0, error: 0, inactive: 0 },
          requests_24h: {
            total: 0,
            "2xx": 0,
            "3xx": 0,
            "4xx": 0,
            "5xx": 0,
            error_rate: null,
            client_error_rate: null
          },
          deliveries_24h: { succeeded: 0, failed: 0, retrying: 0, pending: 0 },
          open_issues: 0,
          webhook_backlog: { pending: 0, oldest_pending_seconds: null, dead_lettered: 0 },
          sync: { lag_seconds: null, live: 0, backfilling: 0, failing: 0 }
        })

        // a day later, the last 24 hours hold none of it
        yield* TestClock.adjust(Duration.hours(25))
        const later = yield* clientFor(yield* signInAgain(owner))
        const dayAfter = yield* later.overview.get()
        assert.strictEqual(dayAfter.requests_24h.total, 0)
        // no request: no rate (null, not 0)
        assert.isNull(dayAfter.requests_24h.error_rate)
        assert.isNull(dayAfter.requests_24h.client_error_rate)
        assert.deepStrictEqual(dayAfter.deliveries_24h, { succeeded: 0, failed: 0, retrying: 0, pending: 0 })
        assert.deepStrictEqual(dayAfter.connections, { active: 1, pending: 0, error: 1, inactive: 1 })
        assert.strictEqual((yield* raw("GET", "/dashboard/api/overview")).status, 401)
      }).pipe(Effect.provide(app)),
    { timeout: 120_000 }
  )

  it.scoped(
    "the webhook backlog and the sync lag: the organisation's own, behind now",
    () => backlogAndLag.pipe(Effect.provide(app)),
    { timeout: 120_000 }
  )
})
