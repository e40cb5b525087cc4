/**
 * The dashboard's webhook management (issue #33, `docs/dashboard.md` "Webhooks"): creating an
 * endpoint (its secret shown once), editing its events, rotating its secret (shown once; the old
 * one signs beside it), disabling and enabling it, a signed test event sent at once; the deliveries
 * across every endpoint (by endpoint, status, outcome and time range, by cursor); resending every
 * failed delivery of a time range (bounded); bad input answered 400 with the envelope, naming the
 * field; another organisation's endpoints 404; no secret in any answer but its reveal.
 */
import type { HttpClient } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { DashboardApi } from "@tracebridge/api"
import { WebhookSignature } from "@tracebridge/core"
import { Bootstrap, Http, Server } from "@tracebridge/http"
import { Effect, Layer, TestClock } from "effect"
import type { WebhookDelivery } from "../src/persistence/WebhookStore.js"
import { WebhookStore } from "../src/persistence/WebhookStore.js"
import * as Crypto from "../src/services/Crypto.js"
import { WebhookDispatcher } from "../src/services/WebhookDispatcher.js"
import { clientFor, firstOwner, invited, type Member, ownerWithKey, raw, transcript } from "./support/Dashboard.js"
import { receiver } from "./support/Receiver.js"
import { call, linkSandbox } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

const app = Http.makeHttpLive({ worker: false }).pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

const T0 = Date.parse("2026-01-15T12:00:00.000Z")
const HOUR = 3_600_000

const runDue = Effect.flatMap(WebhookDispatcher, (d) => d.runDue)

/** A member signed in again (sessions idle out after 30 minutes while the test clock moves). */
const again = (member: Member): Effect.Effect<Member, unknown, HttpClient.HttpClient> =>
  Effect.map(
    raw("POST", "/dashboard/api/session", { json: { email: member.email, password: member.password } }),
    (answer): Member => {
      assert.strictEqual(answer.status, 200, answer.text)
      return { ...member, cookie: answer.cookie!, csrf: answer.body.csrf_token as string }
    }
  )

/** Failed deliveries of one event to an endpoint, written directly (`n` of them, made at `at`). */
const failedDeliveries = (organisationId: string, endpointId: string, n: number, at: number, tag: string) =>
  Effect.flatMap(WebhookStore, (store) =>
    store.insertWebhookEvent(
      {
        id: `evt_${tag}`,
        organisation_id: organisationId,
        connection_id: "conn_x",
        type: "lab_result.received",
        body: "{}",
        created_at: at,
        trace_parent: null
      },
      Array.from({ length: n }, (_, i): WebhookDelivery => ({
        id: `whd_${tag}_${String(i).padStart(4, "0")}`,
        organisation_id: organisationId,
        endpoint_id: endpointId,
        event_id: `evt_${tag}`,
        event_type: "lab_result.received",
        status: "failed",
        attempts: 8,
        claims: 8,
        next_attempt_at: null,
        locked_until: null,
        created_at: at,
        updated_at: at
      }))
    ))

describe("Dashboard webhook management", () => {
  it.scoped(
    "create, edit, rotate, test, disable and enable; deliveries across endpoints; resend failed in a range",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const { access, owner } = yield* ownerWithKey
        const developer = yield* invited(owner, "developer@example.com", "developer")
        const viewer = yield* invited(owner, "viewer@example.com", "viewer")
        const dev = yield* clientFor(developer)
        const linked = yield* linkSandbox(access)
        const hook = yield* receiver([200])
        const other = yield* receiver([500])
        transcript.length = 0

        // --- create: 201, the endpoint and its secret, shown in this answer only
        const created = yield* raw("POST", "/dashboard/api/webhooks", {
          cookie: developer.cookie,
          csrf: developer.csrf,
          json: { url: hook.url, events: ["lab_result.received"], description: "<b>ops</b>" }
        })
        assert.strictEqual(created.status, 201, created.text)
        const webhookId = created.body.webhook.id as string
        const secret = created.body.secret as string
        assert.match(secret, /^whsec_/)
        assert.isNull(created.body.previous_secret_expires_at)
        assert.deepStrictEqual(created.body.webhook.events, ["lab_result.received"])
        assert.strictEqual(created.body.webhook.status, "enabled")
        assert.strictEqual(created.body.webhook.description, "<b>ops</b>")
        assert.deepStrictEqual(created.body.webhook.deliveries_24h, {
          succeeded: 0,
          failed: 0,
          retrying: 0,
          pending: 0
        })
        // the /v1 list sees it: the same endpoint, made by /v1's own code
        const v1 = yield* call("GET", `/v1/webhooks/${webhookId}`, { token: access })
        assert.strictEqual(v1.status, 200)
        assert.strictEqual(v1.body.data.url, hook.url)
        // a second endpoint, failing, for everything in two
        const second = yield* dev.webhooks.create({
          payload: { url: other.url, events: ["lab_result.received", "transfer.arrived"] }
        })
        const otherId = second.webhook.id

        // --- edit: events (and nothing else changes)
        const edited = yield* raw("PATCH", `/dashboard/api/webhooks/${webhookId}`, {
          cookie: developer.cookie,
          csrf: developer.csrf,
          json: { events: ["lab_result.received", "connection.login_required"] }
        })
        assert.strictEqual(edited.status, 200, edited.text)
        assert.deepStrictEqual(edited.body.events, ["lab_result.received", "connection.login_required"])
        assert.strictEqual(edited.body.url, hook.url)
        assert.notProperty(edited.body, "secret")

        // --- test event: signed with the secret, typed webhook.test, received, never a delivery
        const tested = yield* dev.webhooks.test({ path: { webhook_id: webhookId } })
        assert.isTrue(tested.delivered)
        assert.strictEqual(tested.status_code, 200)
        assert.isNull(tested.error)
        assert.strictEqual(tested.response_preview, "ok")
        assert.match(tested.event_id, /^evt_test_/)
        assert.strictEqual(hook.received.length, 1)
        const got = hook.received[0]!
        assert.strictEqual(got.headers["x-tracebridge-event-type"], "webhook.test")
        assert.strictEqual(got.headers["x-tracebridge-event-id"], tested.event_id)
        const body = JSON.parse(got.body)
        assert.strictEqual(body.type, "webhook.test")
        assert.strictEqual(body.data.webhook_id, webhookId)
        yield* WebhookSignature.verify(got.body, got.headers["x-tracebridge-signature"] as string, [secret])
        const noDeliveries = yield* dev.webhooks.deliveries({ path: { webhook_id: webhookId }, urlParams: {} })
        assert.deepStrictEqual(noDeliveries.data, [], "a test event is not a delivery")
        // a failing receiver: said so, with the answer's code and preview
        const failedTest = yield* dev.webhooks.test({ path: { webhook_id: otherId } })
        assert.isFalse(failedTest.delivered)
        assert.strictEqual(failedTest.status_code, 500)
        assert.match(failedTest.error!, /answered 500/)

        // --- rotate: a new secret shown once; both sign during the overlap
        const rotated = yield* raw("POST", `/dashboard/api/webhooks/${webhookId}/rotate_secret`, {
          cookie: developer.cookie,
          csrf: developer.csrf
        })
        assert.strictEqual(rotated.status, 200, rotated.text)
        const newSecret = rotated.body.secret as string
        assert.match(newSecret, /^whsec_/)
        assert.notStrictEqual(newSecret, secret)
        assert.strictEqual(rotated.body.previous_secret_expires_at, T0 + 24 * HOUR)
        yield* dev.webhooks.test({ path: { webhook_id: webhookId } })
        const signed = hook.received[1]!
        const header = signed.headers["x-tracebridge-signature"] as string
        assert.strictEqual(header.split(",").filter((p) => p.startsWith("v1=")).length, 2)
        yield* WebhookSignature.verify(signed.body, header, [newSecret])
        yield* WebhookSignature.verify(signed.body, header, [secret])

        // --- deliveries: three events to both endpoints; the good one succeeds, the other retries
        for (let i = 0; i < 3; i++) {
          const simulated = yield* call("POST", `/v1/sandbox/${linked.connection_id}/simulate`, {
            token: access,
            json: { scenario: "lab_result_received", params: {} }
          })
          assert.strictEqual(simulated.status, 200, JSON.stringify(simulated.body))
          yield* TestClock.adjust(1000)
        }
        assert.strictEqual(yield* runDue, 6)
        const all = yield* dev.webhooks.allDeliveries({ urlParams: {} })
        assert.strictEqual(all.data.length, 6)
        assert.isNull(all.next_cursor)
        assert.isTrue(all.data.every((d, i) => i === 0 || d.created_at <= all.data[i - 1]!.created_at))
        assert.deepStrictEqual(new Set(all.data.map((d) => d.webhook_id)), new Set([webhookId, otherId]))
        const retrying = yield* dev.webhooks.allDeliveries({ urlParams: { outcome: "retrying" } })
        assert.deepStrictEqual(retrying.data.map((d) => d.webhook_id), [otherId, otherId, otherId])
        assert.isTrue(retrying.data.every((d) => d.last_status_code === 500 && d.status === "pending"))
        const succeeded = yield* dev.webhooks.allDeliveries({ urlParams: { status: "succeeded" } })
        assert.deepStrictEqual(succeeded.data.map((d) => d.webhook_id), [webhookId, webhookId, webhookId])
        const ofOne = yield* dev.webhooks.allDeliveries({ urlParams: { webhook_id: otherId } })
        assert.strictEqual(ofOne.data.length, 3)
        // the time range: the second event's deliveries only (made at T0 + 1 s, both ends included)
        const ranged = yield* dev.webhooks.allDeliveries({
          urlParams: { created_from: T0 + 1000, created_to: T0 + 1000 }
        })
        assert.strictEqual(ranged.data.length, 2)
        assert.isTrue(ranged.data.every((d) => d.created_at === T0 + 1000))
        // by cursor: pages of 4 then 2, the same deliveries in the same order
        const first = yield* dev.webhooks.allDeliveries({ urlParams: { limit: 4 } })
        assert.strictEqual(first.data.length, 4)
        const rest = yield* dev.webhooks.allDeliveries({ urlParams: { limit: 4, cursor: first.next_cursor! } })
        assert.deepStrictEqual([...first.data, ...rest.data].map((d) => d.id), all.data.map((d) => d.id))
        assert.isNull(rest.next_cursor)

        // --- disable: the failing endpoint's retries fail for good; enable it again
        const disabled = yield* raw("POST", `/dashboard/api/webhooks/${otherId}/disable`, {
          cookie: developer.cookie,
          csrf: developer.csrf
        })
        assert.strictEqual(disabled.status, 200, disabled.text)
        assert.strictEqual(disabled.body.status, "disabled")
        const refusedTest = yield* raw("POST", `/dashboard/api/webhooks/${otherId}/test`, {
          cookie: developer.cookie,
          csrf: developer.csrf
        })
        assert.strictEqual(refusedTest.status, 409)
        assert.strictEqual(refusedTest.body.error.code, "invalid_state_transition")
        yield* TestClock.adjust(HOUR)
        const dev2 = yield* again(developer)
        const devApi = yield* clientFor(dev2)
        assert.strictEqual(yield* runDue, 3)
        const failedNow = yield* devApi.webhooks.allDeliveries({ urlParams: { status: "failed" } })
        assert.strictEqual(failedNow.data.length, 3)
        const enabled = yield* devApi.webhooks.enable({ path: { webhook_id: otherId } })
        assert.strictEqual(enabled.status, "enabled")
        assert.deepStrictEqual(enabled.deliveries_24h, { succeeded: 0, failed: 3, retrying: 0, pending: 0 })

        // --- resend failed: the receiver is fixed; a range with the first two events' deliveries
        other.script.splice(0, other.script.length, 200)
        const before = other.received.length
        const resent = yield* raw("POST", "/dashboard/api/deliveries/resend_failed", {
          cookie: dev2.cookie,
          csrf: dev2.csrf,
          json: { created_from: T0, created_to: T0 + 1000, webhook_id: otherId }
        })
        assert.strictEqual(resent.status, 200, resent.text)
        assert.deepStrictEqual(resent.body, {
          queued: 2,
          created_from: T0,
          created_to: T0 + 1000,
          webhook_id: otherId
        })
        assert.strictEqual(yield* runDue, 2)
        assert.strictEqual(other.received.length, before + 2)
        const after = yield* devApi.webhooks.allDeliveries({ urlParams: { webhook_id: otherId } })
        assert.deepStrictEqual(after.data.map((d) => d.status), ["failed", "succeeded", "succeeded"])
        // again: nothing failed is left in that range
        const none = yield* devApi.webhooks.resendFailed({ payload: { created_from: T0, created_to: T0 + 1000 } })
        assert.strictEqual(none.queued, 0)
        assert.isNull(none.webhook_id)

        // --- bounded: a range with more than 1000 failed deliveries is refused, nothing queued
        yield* failedDeliveries(owner.organisationId, webhookId, DashboardApi.MAX_RESEND_FAILED + 1, T0 - HOUR, "bulk")
        const tooMany = yield* raw("POST", "/dashboard/api/deliveries/resend_failed", {
          cookie: dev2.cookie,
          csrf: dev2.csrf,
          json: { created_from: T0 - 2 * HOUR, created_to: T0 - HOUR }
        })
        assert.strictEqual(tooMany.status, 400, tooMany.text)
        assert.strictEqual(tooMany.body.error.type, "validation_error")
        assert.strictEqual(tooMany.body.error.param, "created_from")
        assert.match(tooMany.body.error.message, /at most 1000/)
        const stillFailed = yield* devApi.webhooks.allDeliveries({
          urlParams: { status: "failed", created_to: T0 - HOUR, limit: 100 }
        })
        assert.strictEqual(stillFailed.data.length, 100)
        // exactly 1000 is allowed
        const store = yield* WebhookStore
        yield* store.retryFailedDeliveries(["whd_bulk_0000"], T0)
        const thousand = yield* devApi.webhooks.resendFailed({
          payload: { created_from: T0 - 2 * HOUR, created_to: T0 - HOUR }
        })
        assert.strictEqual(thousand.queued, 1000)

        // --- the audit log names each change, with no secret in it
        const audit = yield* (yield* clientFor(yield* again(owner))).team.audit({ urlParams: { per_page: 100 } })
        const actions = audit.data.map((e) => e.action)
        for (
          const action of [
            "webhook.created",
            "webhook.updated",
            "webhook.secret_rotated",
            "webhook.test_sent",
            "webhook.disabled",
            "webhook.enabled",
            "webhook_delivery.resent_failed"
          ]
        ) {
          assert.include(actions, action)
        }
        const bulk = audit.data.find((e) => e.action === "webhook_delivery.resent_failed" && e.target === otherId)
        assert.deepStrictEqual(bulk?.detail, { created_from: T0, created_to: T0 + 1000, queued: 2 })

        // --- no secret in any answer but the one that revealed it
        const reveals = transcript.filter((t) => /\/webhooks \d+$|\/rotate_secret 200$/.test(t.label))
        assert.strictEqual(reveals.length, 2)
        for (const t of transcript) {
          if (reveals.includes(t)) continue
          assert.notInclude(t.text, secret, t.label)
          assert.notInclude(t.text, newSecret, t.label)
          assert.notInclude(t.text, "whsec_", t.label)
        }

        // --- the viewer reads, and changes nothing
        const view = yield* again(viewer)
        const seen = yield* raw("GET", "/dashboard/api/deliveries?outcome=pending", { cookie: view.cookie })
        assert.strictEqual(seen.status, 200)
        for (
          const [method, url, json] of [
            ["POST", "/dashboard/api/webhooks", { url: hook.url, events: ["lab_result.received"] }],
            ["PATCH", `/dashboard/api/webhooks/${webhookId}`, { events: ["transfer.arrived"] }],
            ["POST", `/dashboard/api/webhooks/${webhookId}/rotate_secret`, undefined],
            ["POST", `/dashboard/api/webhooks/${webhookId}/disable`, undefined],
            ["POST", `/dashboard/api/webhooks/${webhookId}/enable`, undefined],
            ["POST", `/dashboard/api/webhooks/${webhookId}/test`, undefined],
            ["POST", "/dashboard/api/deliveries/resend_failed", { created_from: 0, created_to: T0 }]
          ] as const
        ) {
          const refused = yield* raw(method, url, {
            cookie: view.cookie,
            csrf: view.csrf,
            ...(json === undefined ? {} : { json })
          })
          assert.strictEqual(refused.status, 403, `${method} ${url}`)
          assert.strictEqual(refused.body.error.type, "permission_error")
          assert.notInclude(refused.text, "whsec_")
        }
        // and without the CSRF token, a developer changes nothing either
        const noCsrf = yield* raw("POST", `/dashboard/api/webhooks/${webhookId}/disable`, { cookie: dev2.cookie })
        assert.strictEqual(noCsrf.status, 403)
        assert.strictEqual(noCsrf.body.error.param, "x-csrf-token")
        assert.strictEqual((yield* devApi.webhooks.list()).data.find((w) => w.id === webhookId)!.status, "enabled")
      }).pipe(Effect.provide(app)),
    { timeout: 120_000 }
  )

  it.scoped(
    "bad input is 400 with the envelope naming the field; another organisation's endpoints are 404",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const { owner } = yield* ownerWithKey
        const hook = yield* receiver([200])
        const made = yield* raw("POST", "/dashboard/api/webhooks", {
          cookie: owner.cookie,
          csrf: owner.csrf,
          json: { url: hook.url, events: ["transfer.arrived"] }
        })
        assert.strictEqual(made.status, 201)
        const id = made.body.webhook.id as string
        const bad: ReadonlyArray<readonly [string, "GET" | "POST" | "PATCH", string, unknown, string | undefined]> = [
          ["a URL that is not http(s)", "POST", "/dashboard/api/webhooks", {
            url: "ftp://example.com/x",
            events: ["transfer.arrived"]
          }, "url"],
          ["no events", "POST", "/dashboard/api/webhooks", { url: hook.url, events: [] }, "events"],
          ["an unknown event", "POST", "/dashboard/api/webhooks", { url: hook.url, events: ["nope"] }, "events.0"],
          ["no URL", "POST", "/dashboard/api/webhooks", { events: ["transfer.arrived"] }, "url"],
          ["an unknown field", "POST", "/dashboard/api/webhooks", {
            url: hook.url,
            events: ["transfer.arrived"],
            secret: "mine"
          }, "secret"],
          ["an edit of nothing", "PATCH", `/dashboard/api/webhooks/${id}`, {}, undefined],
          ["an edit of the status", "PATCH", `/dashboard/api/webhooks/${id}`, { status: "disabled" }, "status"],
          ["an edit with a bad URL", "PATCH", `/dashboard/api/webhooks/${id}`, { url: "not a url" }, "url"],
          // a script, data or file URL (the page shows the URL; a receiver is http(s) only)
          ...[
            "javascript:alert(1)",
            " JavaScript:alert(1)",
            "java\tscript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "file:///etc/passwd"
          ]
            .flatMap((url) =>
              [
                [`a ${url} URL`, "POST", "/dashboard/api/webhooks", { url, events: ["transfer.arrived"] }, "url"],
                [`an edit to a ${url} URL`, "PATCH", `/dashboard/api/webhooks/${id}`, { url }, "url"]
              ] as const
            ),
          ["a status that is not one", "GET", "/dashboard/api/deliveries?status=bogus", undefined, "status"],
          ["an outcome that is not one", "GET", "/dashboard/api/deliveries?outcome=late", undefined, "outcome"],
          [
            "a time that is not a number",
            "GET",
            "/dashboard/api/deliveries?created_from=yesterday",
            undefined,
            "created_from"
          ],
          [
            "a range backwards",
            "GET",
            `/dashboard/api/deliveries?created_from=${T0}&created_to=${T0 - 1}`,
            undefined,
            "created_to"
          ],
          ["a cursor the list did not give", "GET", "/dashboard/api/deliveries?cursor=nope", undefined, "cursor"],
          ["a limit too large", "GET", "/dashboard/api/deliveries?limit=1000", undefined, "limit"],
          ["a resend without a range", "POST", "/dashboard/api/deliveries/resend_failed", {}, "created_from"],
          ["a resend with a range backwards", "POST", "/dashboard/api/deliveries/resend_failed", {
            created_from: T0,
            created_to: T0 - 1
          }, "created_to"],
          ["a resend with a time as text", "POST", "/dashboard/api/deliveries/resend_failed", {
            created_from: "yesterday",
            created_to: T0
          }, "created_from"]
        ]
        for (const [what, method, url, json, param] of bad) {
          const answer = yield* raw(method, url, {
            cookie: owner.cookie,
            csrf: owner.csrf,
            ...(json === undefined ? {} : { json })
          })
          assert.strictEqual(answer.status, 400, `${what}: ${answer.text}`)
          assert.strictEqual(answer.body.error.type, "validation_error", what)
          assert.containsAllKeys(answer.body.error, ["code", "message", "request_id"])
          if (param !== undefined) assert.strictEqual(answer.body.error.param, param, `${what}: ${answer.text}`)
        }
        // a body that is not JSON, too
        const notJson = yield* raw("PATCH", `/dashboard/api/webhooks/${id}`, {
          cookie: owner.cookie,
          csrf: owner.csrf,
          headers: { "content-type": "application/json" }
        })
        assert.strictEqual(notJson.status, 400, notJson.text)

        // another organisation: each call on A's endpoint is 404, and A's list is not B's
        const orgB = yield* Bootstrap.createOrganisation("Organisation B")
        const ownerB = yield* firstOwner(orgB.id, "owner@b.example")
        for (
          const [method, url, json] of [
            ["PATCH", `/dashboard/api/webhooks/${id}`, { events: ["lab_result.received"] }],
            ["POST", `/dashboard/api/webhooks/${id}/rotate_secret`, undefined],
            ["POST", `/dashboard/api/webhooks/${id}/disable`, undefined],
            ["POST", `/dashboard/api/webhooks/${id}/enable`, undefined],
            ["POST", `/dashboard/api/webhooks/${id}/test`, undefined],
            ["GET", `/dashboard/api/deliveries?webhook_id=${id}`, undefined],
            ["POST", "/dashboard/api/deliveries/resend_failed", { created_from: 0, created_to: T0, webhook_id: id }]
          ] as const
        ) {
          const hidden = yield* raw(method, url, {
            cookie: ownerB.cookie,
            csrf: ownerB.csrf,
            ...(json === undefined ? {} : { json })
          })
          assert.strictEqual(hidden.status, 404, `${method} ${url}: ${hidden.text}`)
          assert.strictEqual(hidden.body.error.type, "not_found_error")
        }
        assert.strictEqual(hook.received.length, 0, "B's test event never reached A's receiver")
        const listB = yield* raw("GET", "/dashboard/api/deliveries", { cookie: ownerB.cookie })
        assert.deepStrictEqual(listB.body, { data: [], next_cursor: null })
        const stillA = yield* raw("GET", "/dashboard/api/webhooks", { cookie: owner.cookie })
        assert.deepStrictEqual(stillA.body.data[0].events, ["transfer.arrived"])
        // no refused URL was stored: one endpoint, at the receiver's URL
        assert.strictEqual(stillA.body.data.length, 1)
        assert.strictEqual(stillA.body.data[0].url, hook.url)
        assert.strictEqual(stillA.body.data[0].status, "enabled")
      }).pipe(Effect.provide(app)),
    { timeout: 60_000 }
  )
})
