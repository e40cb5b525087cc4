/**
 * The dashboard's Webhooks page API (issue #33): the organisation's endpoints with their last
 * day's deliveries by outcome, an endpoint's deliveries by cursor and status, one delivery with
 * every attempt and a redacted, bounded preview of each answer, and a resend (developer and up,
 * CSRF, audited) that runs `/v1`'s redelivery; a failing receiver shows under Issues until a resend
 * succeeds; another organisation's endpoints and deliveries are 404.
 */
import type { HttpClient } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap, Http, Server } from "@tracebridge/http"
import { Effect, Layer, TestClock } from "effect"
import * as Crypto from "../src/services/Crypto.js"
import { PREVIEW_LIMIT, previewOf, WebhookDispatcher } from "../src/services/WebhookDispatcher.js"
import { clientFor, firstOwner, invited, type Member, ownerWithKey, raw } from "./support/Dashboard.js"
import { receiver } from "./support/Receiver.js"
import { call, linkSandbox } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

const app = Http.makeHttpLive({ worker: false }).pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

/** Tests start on a realistic day (the sandbox dates worlds from the clock). */
const T0 = Date.parse("2026-01-15T12:00:00.000Z")

const runDue = Effect.flatMap(WebhookDispatcher, (d) => d.runDue)

/** What the failing receiver answers: a secret-looking key, an issued token, and more than 2 KB. */
const LEAKY = JSON.stringify({
  error: "receiver down",
  api_key: "sk_live_receiver_secret_1",
  echo: "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  padding: "x".repeat(5000)
})

describe("Dashboard webhooks", () => {
  it("previewOf redacts secret-looking keys and issued tokens, parsed or not, and keeps 2 KB at most", () => {
    const parsed = previewOf(LEAKY)
    assert.isAtMost(Buffer.byteLength(parsed, "utf8"), PREVIEW_LIMIT)
    assert.include(parsed, `"api_key":"[REDACTED]"`)
    assert.include(parsed, "whsec_[REDACTED]")
    assert.notInclude(parsed, "sk_live_receiver_secret_1")
    // cut short (not JSON): the pairs are found by pattern
    const cut = previewOf(`{"password": "hunter2-long", "note": "tb_at_abcdefgh", "x": "${"y".repeat(20_000)}`)
    assert.include(cut, `"password": "[REDACTED]"`)
    assert.include(cut, "tb_at_[REDACTED]")
    assert.notInclude(cut, "hunter2-long")
    assert.isTrue(cut.endsWith("…"))
    assert.strictEqual(previewOf("ok"), "ok")
  })

  it.scoped(
    "endpoints, deliveries, attempts with a preview, resend; roles, CSRF, audit, issues",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const { access, dashboard, key, owner } = yield* ownerWithKey
        const viewer = yield* invited(owner, "viewer@example.com", "viewer")
        const developer = yield* invited(owner, "developer@example.com", "developer")
        const linked = yield* linkSandbox(access)
        const hook = yield* receiver([500])
        hook.body = LEAKY
        hook.contentType = "application/json"
        const created = yield* call("POST", "/v1/webhooks/", {
          token: access,
          json: { url: hook.url, events: ["lab_result.received"] }
        })
        assert.strictEqual(created.status, 201)
        const webhookId = created.body.data.id as string
        const secret = created.body.data.secret as string
        for (let i = 0; i < 3; i++) {
          const simulated = yield* call("POST", `/v1/sandbox/${linked.connection_id}/simulate`, {
            token: access,
            json: { scenario: "lab_result_received", params: {} }
          })
          assert.strictEqual(simulated.status, 200, JSON.stringify(simulated.body))
          yield* TestClock.adjust(1)
        }
        assert.strictEqual(yield* runDue, 3)
        assert.strictEqual(hook.received.length, 3)

        // the endpoints, with the last day's deliveries by outcome; never the secret
        const listed = yield* raw("GET", "/dashboard/api/webhooks", { cookie: viewer.cookie })
        assert.strictEqual(listed.status, 200)
        assert.deepStrictEqual(listed.body.data.map((w: any) => w.id), [webhookId])
        const entry = listed.body.data[0]
        assert.deepStrictEqual(entry.events, ["lab_result.received"])
        assert.strictEqual(entry.status, "enabled")
        assert.strictEqual(entry.url, hook.url)
        assert.deepStrictEqual(entry.deliveries_24h, { succeeded: 0, failed: 0, retrying: 3, pending: 0 })
        assert.notInclude(listed.text, secret)

        // the deliveries, newest first, paged by cursor, filtered by status
        const all = yield* dashboard.webhooks.deliveries({ path: { webhook_id: webhookId }, urlParams: {} })
        assert.strictEqual(all.data.length, 3)
        assert.isNull(all.next_cursor)
        const newest = all.data[0]!
        assert.strictEqual(newest.status, "pending")
        assert.strictEqual(newest.attempts, 1)
        assert.strictEqual(newest.last_status_code, 500)
        assert.strictEqual(newest.event_type, "lab_result.received")
        assert.isNotNull(newest.next_attempt_at)
        assert.isTrue(all.data.every((d, i) => i === 0 || d.created_at <= all.data[i - 1]!.created_at))
        const first = yield* dashboard.webhooks.deliveries({ path: { webhook_id: webhookId }, urlParams: { limit: 2 } })
        assert.strictEqual(first.data.length, 2)
        assert.isNotNull(first.next_cursor)
        const rest = yield* dashboard.webhooks.deliveries({
          path: { webhook_id: webhookId },
          urlParams: { limit: 2, cursor: first.next_cursor! }
        })
        assert.deepStrictEqual(
          [...first.data, ...rest.data].map((d) => d.id),
          all.data.map((d) => d.id)
        )
        assert.isNull(rest.next_cursor)
        const none = yield* dashboard.webhooks.deliveries({
          path: { webhook_id: webhookId },
          urlParams: { status: "succeeded" }
        })
        assert.deepStrictEqual(none.data, [])
        const badStatus = yield* raw("GET", `/dashboard/api/webhooks/${webhookId}/deliveries?status=bogus`, {
          cookie: viewer.cookie
        })
        assert.strictEqual(badStatus.status, 400)
        assert.strictEqual(badStatus.body.error.type, "validation_error")
        assert.strictEqual(badStatus.body.error.param, "status")
        const badCursor = yield* raw("GET", `/dashboard/api/webhooks/${webhookId}/deliveries?cursor=nope`, {
          cookie: viewer.cookie
        })
        assert.strictEqual(badCursor.status, 400)
        assert.strictEqual(badCursor.body.error.param, "cursor")
        const unknownHook = yield* raw("GET", "/dashboard/api/webhooks/wh_unknown/deliveries", {
          cookie: viewer.cookie
        })
        assert.strictEqual(unknownHook.status, 404)

        // one delivery: each attempt with its answer's preview, redacted and bounded
        const detail = yield* raw("GET", `/dashboard/api/deliveries/${newest.id}`, { cookie: viewer.cookie })
        assert.strictEqual(detail.status, 200)
        const attempt = detail.body.attempt_log[0]
        assert.strictEqual(attempt.attempt, 1)
        assert.strictEqual(attempt.status_code, 500)
        assert.isNumber(attempt.duration_ms)
        assert.isAtMost(Buffer.byteLength(attempt.response_preview, "utf8"), PREVIEW_LIMIT)
        assert.include(attempt.response_preview, "receiver down")
        assert.include(attempt.response_preview, "[REDACTED]")
        assert.notInclude(detail.text, "sk_live_receiver_secret_1")
        assert.notInclude(detail.text, "whsec_AAAA")
        assert.notInclude(detail.text, secret)

        // failing deliveries are an issue
        const failing = yield* dashboard.issues.list()
        const failingIssue = failing.data.find((i) => i.kind === "webhook_failing")
        assert.isDefined(failingIssue, JSON.stringify(failing))
        assert.strictEqual(failingIssue!.webhook_id, webhookId)
        assert.strictEqual(failingIssue!.count, 3)
        assert.strictEqual(failingIssue!.severity, "warning")

        // disabled, the endpoint's next attempts fail for good: a critical issue
        const disabled = yield* call("PATCH", `/v1/webhooks/${webhookId}`, {
          token: access,
          json: { status: "disabled" }
        })
        assert.strictEqual(disabled.status, 200)
        yield* TestClock.adjust(60 * 60_000)
        // the members sign in again (sessions end after 30 idle minutes)
        const ownerApi = yield* clientFor(yield* signInAgain(owner))
        const dev = yield* signInAgain(developer)
        const view = yield* signInAgain(viewer)
        assert.strictEqual(yield* runDue, 3)
        const failed = yield* ownerApi.issues.list()
        const deadIssue = failed.data.find((i) => i.kind === "webhook_deliveries_failed")
        assert.isDefined(deadIssue, JSON.stringify(failed))
        assert.strictEqual(deadIssue!.severity, "critical")
        assert.strictEqual(deadIssue!.count, 3)
        assert.isUndefined(failed.data.find((i) => i.kind === "webhook_failing"))
        const failedOnly = yield* ownerApi.webhooks.deliveries({
          path: { webhook_id: webhookId },
          urlParams: { status: "failed" }
        })
        assert.strictEqual(failedOnly.data.length, 3)

        // resend: a viewer may not, nor anyone without the CSRF token, nor on another organisation's
        const path = `/dashboard/api/deliveries/${newest.id}/resend`
        const byViewer = yield* raw("POST", path, { cookie: view.cookie, csrf: view.csrf })
        assert.strictEqual(byViewer.status, 403)
        assert.strictEqual(byViewer.body.error.type, "permission_error")
        const noCsrf = yield* raw("POST", path, { cookie: dev.cookie })
        assert.strictEqual(noCsrf.status, 403)
        assert.strictEqual(noCsrf.body.error.param, "x-csrf-token")
        const orgB = yield* Bootstrap.createOrganisation("Organisation B")
        const ownerB = yield* firstOwner(orgB.id, "owner@b.example")
        for (
          const [method, url] of [
            ["GET", `/dashboard/api/webhooks/${webhookId}/deliveries`],
            ["GET", `/dashboard/api/deliveries/${newest.id}`],
            ["POST", path]
          ] as const
        ) {
          const hidden = yield* raw(method, url, { cookie: ownerB.cookie, csrf: ownerB.csrf })
          assert.strictEqual(hidden.status, 404, `${method} ${url}`)
          assert.strictEqual(hidden.body.error.type, "not_found_error")
        }
        const theirs = yield* raw("GET", "/dashboard/api/webhooks", { cookie: ownerB.cookie })
        assert.deepStrictEqual(theirs.body.data, [])
        const stillFailed = yield* ownerApi.webhooks.delivery({ path: { delivery_id: newest.id } })
        assert.strictEqual(stillFailed.status, "failed")

        // fixed and enabled again, the developer resends: it is delivered
        hook.script.splice(0, hook.script.length, 200)
        hook.body = "thanks"
        hook.contentType = "text/plain"
        yield* call("PATCH", `/v1/webhooks/${webhookId}`, { token: yield* renew(key), json: { status: "enabled" } })
        const resent = yield* raw("POST", path, { cookie: dev.cookie, csrf: dev.csrf })
        assert.strictEqual(resent.status, 200, resent.text)
        assert.strictEqual(resent.body.status, "pending")
        assert.strictEqual(resent.body.next_attempt_at, T0 + 3 + 60 * 60_000)
        assert.strictEqual(yield* runDue, 1)
        const delivered = yield* ownerApi.webhooks.delivery({ path: { delivery_id: newest.id } })
        assert.strictEqual(delivered.status, "succeeded")
        assert.deepStrictEqual(delivered.attempt_log.map((a) => a.status_code), [500, null, 200])
        assert.strictEqual(delivered.attempt_log[2]!.response_preview, "thanks")
        assert.isNull(delivered.attempt_log[1]!.response_preview, "no answer: the endpoint was disabled")
        assert.strictEqual(delivered.last_status_code, 200)
        assert.strictEqual(hook.received.at(-1)!.headers["x-tracebridge-event-id"], newest.event_id)
        const audit = yield* ownerApi.team.audit({ urlParams: {} })
        const resentEntry = audit.data.find((e) => e.action === "webhook_delivery.resent")
        assert.isDefined(resentEntry)
        assert.strictEqual(resentEntry!.target, newest.id)
        assert.strictEqual(resentEntry!.actor, "developer@example.com")
        assert.deepStrictEqual(resentEntry!.detail, {
          webhook_id: webhookId,
          event_id: newest.event_id,
          previous_status: "failed"
        })
        const after = yield* ownerApi.issues.list()
        const remaining = after.data.find((i) => i.kind === "webhook_deliveries_failed")
        assert.strictEqual(remaining?.count, 2, "the resent one no longer counts")
        const counts = (yield* ownerApi.webhooks.list()).data[0]!.deliveries_24h
        assert.deepStrictEqual(counts, { succeeded: 1, failed: 2, retrying: 0, pending: 0 })
      }).pipe(Effect.provide(app)),
    { timeout: 120_000 }
  )
})

/** A member signed in again (their session idled out while the test clock moved). */
const signInAgain = (member: Member): Effect.Effect<Member, unknown, HttpClient.HttpClient> =>
  Effect.map(
    raw("POST", "/dashboard/api/session", { json: { email: member.email, password: member.password } }),
    (answer): Member => {
      assert.strictEqual(answer.status, 200, answer.text)
      return { ...member, cookie: answer.cookie!, csrf: answer.body.csrf_token as string }
    }
  )

/** A fresh access token (they live an hour). */
const renew = (client: { readonly client_id: string; readonly client_secret: string }) =>
  Effect.map(
    call("POST", "/v1/oauth/token", {
      json: { grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret }
    }),
    (r) => r.body.access_token as string
  )
