/**
 * The dashboard's webhook management on Postgres (issue #33), in a fresh schema of its own:
 * creating an endpoint (its secret once), editing, rotating, a test event, disabling; the
 * deliveries across endpoints by outcome, time range and cursor; resending the failed ones of a
 * range (and the bound). Runs with `npm run test:pg` (TEST_DATABASE_URL).
 */
import { assert, describe, it } from "@effect/vitest"
import { DashboardApi } from "@tracebridge/api"
import { Effect, TestClock } from "effect"
import type { WebhookDelivery } from "../src/persistence/WebhookStore.js"
import { WebhookStore } from "../src/persistence/WebhookStore.js"
import { WebhookDispatcher } from "../src/services/WebhookDispatcher.js"
import { clientFor, ownerWithKeyAs, raw } from "./support/Dashboard.js"
import { onFreshApp } from "./support/DashboardPg.js"
import { testDatabaseUrl } from "./support/PgSchema.js"
import { receiver } from "./support/Receiver.js"
import { call, linkSandbox } from "./support/TestApp.js"

const url = testDatabaseUrl("DashboardWebhookEndpoints.pg.test.ts")

const T0 = Date.parse("2026-01-15T12:00:00.000Z")
const HOUR = 3_600_000

describe("Dashboard webhook management (Postgres)", () => {
  it.scoped(
    "create, edit, rotate, test, disable; deliveries across endpoints; resend failed, bounded",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const { access, dashboard, owner } = yield* ownerWithKeyAs("pg-hooks@example.com")
        const linked = yield* linkSandbox(access)
        const good = yield* receiver([200])
        const bad = yield* receiver([500])

        const created = yield* dashboard.webhooks.create({
          payload: { url: good.url, events: ["lab_result.received"] }
        })
        assert.match(created.secret, /^whsec_/)
        const failing = yield* dashboard.webhooks.create({
          payload: { url: bad.url, events: ["transfer.arrived"] }
        })
        const edited = yield* dashboard.webhooks.edit({
          path: { webhook_id: failing.webhook.id },
          payload: { events: ["lab_result.received", "transfer.arrived"] }
        })
        assert.deepStrictEqual(edited.events, ["lab_result.received", "transfer.arrived"])
        const rotated = yield* dashboard.webhooks.rotateSecret({ path: { webhook_id: created.webhook.id } })
        assert.notStrictEqual(rotated.secret, created.secret)
        assert.strictEqual(rotated.previous_secret_expires_at, T0 + 24 * HOUR)
        const tested = yield* dashboard.webhooks.test({ path: { webhook_id: created.webhook.id } })
        assert.isTrue(tested.delivered)
        assert.strictEqual(good.received.at(-1)!.headers["x-tracebridge-event-type"], "webhook.test")
        const listed = yield* raw("GET", "/dashboard/api/webhooks", { cookie: owner.cookie })
        assert.notInclude(listed.text, "whsec_")

        for (let i = 0; i < 3; i++) {
          yield* call("POST", `/v1/sandbox/${linked.connection_id}/simulate`, {
            token: access,
            json: { scenario: "lab_result_received", params: {} }
          })
          yield* TestClock.adjust(1000)
        }
        assert.strictEqual(yield* Effect.flatMap(WebhookDispatcher, (d) => d.runDue), 6)
        const retrying = yield* dashboard.webhooks.allDeliveries({ urlParams: { outcome: "retrying" } })
        assert.strictEqual(retrying.data.length, 3)
        assert.isTrue(retrying.data.every((d) => d.webhook_id === failing.webhook.id))
        const ranged = yield* dashboard.webhooks.allDeliveries({
          urlParams: { created_from: T0 + 1000, created_to: T0 + 2000, limit: 1 }
        })
        assert.strictEqual(ranged.data.length, 1)
        const next = yield* dashboard.webhooks.allDeliveries({
          urlParams: { created_from: T0 + 1000, created_to: T0 + 2000, limit: 10, cursor: ranged.next_cursor! }
        })
        assert.strictEqual(next.data.length, 3)
        assert.isNull(next.next_cursor)

        // disabled, the failing endpoint's retries fail for good; fixed and enabled, resent by range
        const disabled = yield* dashboard.webhooks.disable({ path: { webhook_id: failing.webhook.id } })
        assert.strictEqual(disabled.status, "disabled")
        yield* TestClock.adjust(HOUR)
        const again = yield* raw("POST", "/dashboard/api/session", {
          json: { email: owner.email, password: owner.password }
        })
        const fresh = yield* clientFor({ ...owner, cookie: again.cookie!, csrf: again.body.csrf_token })
        assert.strictEqual(yield* Effect.flatMap(WebhookDispatcher, (d) => d.runDue), 3)
        yield* fresh.webhooks.enable({ path: { webhook_id: failing.webhook.id } })
        bad.script.splice(0, bad.script.length, 200)
        const resent = yield* fresh.webhooks.resendFailed({ payload: { created_from: T0, created_to: T0 + 2000 } })
        assert.strictEqual(resent.queued, 3)
        assert.strictEqual(yield* Effect.flatMap(WebhookDispatcher, (d) => d.runDue), 3)
        const done = yield* fresh.webhooks.allDeliveries({ urlParams: { webhook_id: failing.webhook.id } })
        assert.deepStrictEqual(done.data.map((d) => d.status), ["succeeded", "succeeded", "succeeded"])

        // more than the bound in a range: refused, nothing queued
        const store = yield* WebhookStore
        yield* store.insertWebhookEvent(
          {
            id: "evt_pg_bulk",
            organisation_id: owner.organisationId,
            connection_id: linked.connection_id,
            type: "lab_result.received",
            body: "{}",
            created_at: T0 - HOUR,
            trace_parent: null
          },
          Array.from({ length: DashboardApi.MAX_RESEND_FAILED + 1 }, (_, i): WebhookDelivery => ({
            id: `whd_pg_${i}`,
            organisation_id: owner.organisationId,
            endpoint_id: created.webhook.id,
            event_id: "evt_pg_bulk",
            event_type: "lab_result.received",
            status: "failed",
            attempts: 8,
            claims: 8,
            next_attempt_at: null,
            locked_until: null,
            created_at: T0 - HOUR,
            updated_at: T0 - HOUR
          }))
        )
        const tooMany = yield* raw("POST", "/dashboard/api/deliveries/resend_failed", {
          cookie: again.cookie!,
          csrf: again.body.csrf_token,
          json: { created_from: T0 - 2 * HOUR, created_to: T0 - HOUR }
        })
        assert.strictEqual(tooMany.status, 400, tooMany.text)
        assert.strictEqual(tooMany.body.error.param, "created_from")
        const stillFailed = yield* fresh.webhooks.allDeliveries({
          urlParams: { status: "failed", created_to: T0 - HOUR, limit: 100 }
        })
        assert.strictEqual(stillFailed.data.length, 100)
      }).pipe(onFreshApp(url, "dashboard_hooks")),
    { timeout: 120_000 }
  )
})
