/**
 * The Overview's webhook backlog and sync lag (issue #33), run on SQLite
 * (`DashboardOverview.test.ts`) and on Postgres (`DashboardOverview.pg.test.ts`): two
 * organisations' facilities and deliveries written directly, each organisation's figures counting
 * its own only, the gauges' snapshot counting both, and the figures moving with the clock.
 */
import { assert } from "@effect/vitest"
import { Bootstrap } from "@tracebridge/http"
import { SyncStore } from "@tracebridge/sync"
import { Duration, Effect, Option, TestClock } from "effect"
import { ConnectionStore } from "../../src/persistence/ConnectionStore.js"
import * as MetricsStore from "../../src/persistence/MetricsStore.js"
import type { WebhookDelivery } from "../../src/persistence/WebhookStore.js"
import { WebhookStore } from "../../src/persistence/WebhookStore.js"
import { accept, firstOwner, invited, raw } from "./Dashboard.js"

export const T0 = Date.parse("2026-01-15T12:00:00.000Z")
const MIN = 60_000

const connection = (organisationId: string, id: string) =>
  Effect.flatMap(ConnectionStore, (store) =>
    store.insertConnection({
      id,
      organisation_id: organisationId,
      provider: "provider_b",
      state: "WA",
      status: "active",
      is_sandbox: true,
      external_id: null,
      credentials: null,
      key_id: null,
      token_issued: false,
      created_at: T0 - 60 * MIN,
      updated_at: T0 - 60 * MIN,
      sandbox_version: 0,
      sandbox_fault: null
    }))

const facility = (
  connectionId: string,
  facilityId: string,
  patch: Parameters<SyncStore.SyncStore["Type"]["updateFacility"]>[2]
) =>
  Effect.gen(function*() {
    const sync = yield* SyncStore.SyncStore
    yield* sync.ensureFacility(connectionId, facilityId, T0)
    yield* sync.updateFacility(connectionId, facilityId, patch)
  })

/** One event's deliveries, written directly: `[status, created minutes before T0]` each. */
const deliveries = (
  organisationId: string,
  tag: string,
  made: ReadonlyArray<readonly [WebhookDelivery["status"], number]>
) =>
  Effect.flatMap(WebhookStore, (store) =>
    store.insertWebhookEvent(
      {
        id: `evt_${tag}`,
        organisation_id: organisationId,
        connection_id: `conn_${tag}`,
        type: "lab_result.received",
        body: "{}",
        created_at: T0,
        trace_parent: null
      },
      made.map(([status, minutes], i): WebhookDelivery => ({
        id: `whd_${tag}_${i}`,
        organisation_id: organisationId,
        endpoint_id: `we_${tag}`,
        event_id: `evt_${tag}`,
        event_type: "lab_result.received",
        status,
        attempts: status === "pending" ? 0 : 1,
        claims: status === "pending" ? 0 : 1,
        next_attempt_at: status === "pending" ? T0 : null,
        locked_until: null,
        created_at: T0 - minutes * MIN,
        updated_at: T0 - minutes * MIN
      }))
    ))

export const backlogAndLag = Effect.gen(function*() {
  yield* TestClock.setTime(T0)
  const start = Option.getOrThrow(yield* Bootstrap.firstStart)
  const owner = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "figures@example.com")
  const viewer = yield* invited(owner, "figures-viewer@example.com", "viewer")
  const orgA = owner.organisationId
  const orgB = yield* Bootstrap.createOrganisation("Organisation B")
  const ownerB = yield* firstOwner(orgB.id, "figures@b.example")
  const orgC = yield* Bootstrap.createOrganisation("Organisation C")
  const ownerC = yield* firstOwner(orgC.id, "figures@c.example")

  // A: three live facilities (the oldest synced 2 minutes ago, one failing), one backfilling, one
  // stopped on a refused login
  yield* connection(orgA, "conn_a")
  yield* facility("conn_a", "fac_live_old", { status: "live", last_synced_at: T0 - 2 * MIN })
  yield* facility("conn_a", "fac_live_new", { status: "live", last_synced_at: T0 - 30_000 })
  yield* facility("conn_a", "fac_live_failing", {
    status: "live",
    last_synced_at: T0 - MIN,
    failing_since: T0 - 30_000,
    last_error: "provider_unavailable"
  })
  yield* facility("conn_a", "fac_backfilling", { status: "backfilling" })
  yield* facility("conn_a", "fac_error", { status: "error", last_synced_at: T0 - 600 * MIN })
  // A: two pending (the oldest made 5 minutes ago), one dead-lettered, one delivered
  yield* deliveries(orgA, "a", [["pending", 5], ["pending", 1], ["failed", 30], ["succeeded", 2]])
  // B: far behind, and a longer backlog; never in A's figures
  yield* connection(orgB.id, "conn_b")
  yield* facility("conn_b", "fac_b_live", { status: "live", last_synced_at: T0 - 60 * MIN })
  yield* facility("conn_b", "fac_b_error", { status: "error" })
  yield* deliveries(orgB.id, "b", [["pending", 120], ["pending", 60], ["pending", 3], ["failed", 10], ["failed", 9]])

  const overview = (cookie: string) =>
    Effect.map(raw("GET", "/dashboard/api/overview", { cookie }), (answer) => {
      assert.strictEqual(answer.status, 200, answer.text)
      return answer.body as { webhook_backlog: unknown; sync: unknown }
    })

  const a = yield* overview(viewer.cookie)
  assert.deepStrictEqual(a.webhook_backlog, { pending: 2, oldest_pending_seconds: 300, dead_lettered: 1 })
  assert.deepStrictEqual(a.sync, { lag_seconds: 120, live: 3, backfilling: 1, failing: 2 })
  const b = yield* overview(ownerB.cookie)
  assert.deepStrictEqual(b.webhook_backlog, { pending: 3, oldest_pending_seconds: 7200, dead_lettered: 2 })
  assert.deepStrictEqual(b.sync, { lag_seconds: 3600, live: 1, backfilling: 0, failing: 1 })
  // nothing synced, nothing pending: no lag and no age, rather than 0
  const c = yield* overview(ownerC.cookie)
  assert.deepStrictEqual(c.webhook_backlog, { pending: 0, oldest_pending_seconds: null, dead_lettered: 0 })
  assert.deepStrictEqual(c.sync, { lag_seconds: null, live: 0, backfilling: 0, failing: 0 })

  // the gauges read the same statements over every organisation
  const all = yield* Effect.flatMap(MetricsStore.MetricsStore, (store) => store.snapshot)
  assert.strictEqual(all.deliveries.pending, 5)
  assert.strictEqual(all.deliveries.failed, 3)
  assert.strictEqual(MetricsStore.syncLagSeconds(all, T0), 3600)
  assert.strictEqual(MetricsStore.oldestPendingSeconds(all, T0), 7200)
  assert.strictEqual(all.facilities.live, 4)
  assert.strictEqual(all.failingFacilities, 3)

  // behind now: a minute later, both ages have grown by 60 s
  yield* TestClock.adjust(Duration.minutes(1))
  const later = yield* overview(viewer.cookie)
  assert.deepStrictEqual(later.webhook_backlog, { pending: 2, oldest_pending_seconds: 360, dead_lettered: 1 })
  assert.deepStrictEqual(later.sync, { lag_seconds: 180, live: 3, backfilling: 1, failing: 2 })

  // synced and delivered: the lag is the next oldest, the backlog empties
  yield* Effect.flatMap(SyncStore.SyncStore, (sync) =>
    Effect.all([
      sync.updateFacility("conn_a", "fac_live_old", { last_synced_at: T0 + MIN }),
      sync.updateFacility("conn_a", "fac_live_failing", { failing_since: null, last_synced_at: T0 + MIN })
    ]))
  // the dead-lettered delivery resent: pending again, and the oldest pending (made 31 minutes ago)
  assert.strictEqual(
    yield* Effect.flatMap(WebhookStore, (store) => store.retryFailedDeliveries(["whd_a_2"], T0 + MIN)),
    1
  )
  const synced = yield* overview(viewer.cookie)
  assert.deepStrictEqual(synced.sync, { lag_seconds: 30 + 60, live: 3, backfilling: 1, failing: 1 })
  assert.deepStrictEqual(synced.webhook_backlog, { pending: 3, oldest_pending_seconds: 31 * 60, dead_lettered: 0 })
  // another organisation's figures did not move
  assert.deepStrictEqual((yield* overview(ownerB.cookie)).sync, {
    lag_seconds: 3660,
    live: 1,
    backfilling: 0,
    failing: 1
  })
})
