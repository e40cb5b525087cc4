/**
 * The outbox across a restart, the worker loop on its own (as the quickstart sees it), and the
 * production poller reconciling the emulator's lists as if it were a production state system.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { UpstreamGovernor, WebhookSignature } from "@tracebridge/core"
import { Http } from "@tracebridge/http"
import type { Scenario } from "@tracebridge/sandbox"
import { SyncStore } from "@tracebridge/sync"
import { Duration, Effect, Either, Fiber, Layer, Option, TestClock } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import * as Database from "../src/persistence/Database.js"
import { Transactions } from "../src/persistence/Transactions.js"
import { WebhookStore } from "../src/persistence/WebhookStore.js"
import * as Crypto from "../src/services/Crypto.js"
import { Providers } from "../src/services/Providers.js"
import { signatureHeader, WebhookDispatcher } from "../src/services/WebhookDispatcher.js"
import { WebhookPoller } from "../src/services/WebhookPoller.js"
import { Webhooks } from "../src/services/Webhooks.js"
import { hostile } from "./support/HostileReceiver.js"
import { receiver } from "./support/Receiver.js"
import { call, linkSandbox, otherOrganisation, signIn } from "./support/TestApp.js"
import { webhookApp } from "./support/WebhookApp.js"

const T0 = Date.parse("2026-01-15T12:00:00.000Z")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-webhooks-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const subscribe = (access: string, url: string, events: ReadonlyArray<string> = ["lab_result.received"]) =>
  Effect.map(call("POST", "/v1/webhooks/", { token: access, json: { url, events } }), (r) => {
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body.data as { id: string; secret: string }
  })

describe("Outbox durability", () => {
  it.scoped("a delivery queued before the server stops is delivered by the next server over the same database", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const hooks = yield* receiver([200])
      const file = path.join(dir, "restart", "tracebridge.db")
      const key = randomBytes(32)
      // One "process": the API over the SQLite file, with the worker off so nothing is sent.
      const server = Http.makeHttpLive({ worker: false }).pipe(
        Layer.provideMerge(NodeHttpServer.layerTest),
        Layer.provideMerge(Layer.succeed(Crypto.Crypto, Crypto.make([key]))),
        Layer.provideMerge(Database.layerSqlite(file))
      )
      const queued = yield* Effect.gen(function*() {
        const { access } = yield* signIn
        const linked = yield* linkSandbox(access)
        const hook = yield* subscribe(access, hooks.url)
        const r = yield* call("POST", `/v1/sandbox/${linked.connection_id}/simulate`, {
          token: access,
          json: { scenario: "lab_result_received", params: { result: "fail" } }
        })
        assert.strictEqual(r.body.data.deliveries, 1)
        return { hook, event: r.body.data.event }
      }).pipe(Effect.provide(server))
      assert.strictEqual(hooks.received.length, 0)
      // The embedded database keeps a write-ahead log (file format bytes 18 and 19 of the header
      // are 2): one fsync per commit instead of a rollback journal's several.
      const header = fs.readFileSync(file).subarray(18, 20)
      assert.deepStrictEqual([...header], [2, 2])

      // The server is gone (its layer released). A new one over the same file delivers.
      const sent = yield* Effect.flatMap(WebhookDispatcher, (d) => d.runDue).pipe(Effect.provide(server))
      assert.strictEqual(sent, 1)
      assert.strictEqual(hooks.received.length, 1)
      const got = hooks.received[0]!
      assert.deepStrictEqual(JSON.parse(got.body), queued.event)
      yield* WebhookSignature.verify(got.body, got.headers["x-tracebridge-signature"] as string, [queued.hook.secret])
    }))
})

describe("Worker", () => {
  it.live("on its own, the worker delivers a simulated lab_result.received that verifyWebhook accepts", () =>
    Effect.gen(function*() {
      const hooks = yield* receiver([200])
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const hook = yield* subscribe(access, hooks.url)
      const r = yield* call("POST", `/v1/sandbox/${linked.connection_id}/simulate`, {
        token: access,
        json: { scenario: "lab_result_received", params: { result: "fail" } }
      })
      assert.strictEqual(r.status, 200)
      for (let i = 0; i < 100 && hooks.received.length === 0; i++) yield* Effect.sleep("50 millis")
      assert.strictEqual(hooks.received.length, 1)
      const got = hooks.received[0]!
      const event = yield* Effect.promise(() =>
        WebhookSignature.verifyWebhook(got.body, got.headers["x-tracebridge-signature"] as string, [hook.secret], {
          toleranceSeconds: 300
        })
      )
      assert.strictEqual(event.type, "lab_result.received")
      assert.isTrue(event.type === "lab_result.received" && event.data.passed === false)
    }).pipe(Effect.provide(webhookApp({ worker: true })), Effect.scoped))
})

/** Waits in real time (the tests below run on the TestClock) until `check` holds. */
const until = (what: string, check: Effect.Effect<boolean, never, any>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      if (yield* check) return
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    assert.fail(`timed out waiting for ${what}`)
  })

/** The worker loop of this process, forked (its tick an hour: only a wake-up or `send` moves it). */
const startWorker = Effect.gen(function*() {
  const dispatcher = yield* WebhookDispatcher
  const fiber = yield* Effect.fork(dispatcher.loop(Duration.hours(1)))
  yield* until("the worker to start", Effect.map(dispatcher.holdUntil, (h) => h !== undefined))
  return fiber
})

/**
 * A subscribed receiver and one event as simulate makes them (the worker not running: queued
 * unheld, and sent here), then `enqueue` to write more of it held for this process's worker.
 */
const handOverSetup = Effect.gen(function*() {
  yield* TestClock.setTime(T0)
  const hooks = yield* receiver([200])
  const { access } = yield* signIn
  const linked = yield* linkSandbox(access)
  yield* subscribe(access, hooks.url)
  const connectionStore = yield* ConnectionStore
  const transactions = yield* Transactions
  const webhooks = yield* Webhooks
  const dispatcher = yield* WebhookDispatcher
  const r = yield* call("POST", `/v1/sandbox/${linked.connection_id}/simulate`, {
    token: access,
    json: { scenario: "lab_result_received", params: {} }
  })
  assert.strictEqual(yield* dispatcher.runDue, 1)
  const connection = Option.getOrThrow(yield* connectionStore.getConnection(linked.connection_id))
  const enqueue = (id: string) =>
    transactions.transaction(
      webhooks.enqueueAndSend(connection.organisation_id, connection.id, { ...r.body.data.event, id })
    )
  return { dispatcher, enqueue, hooks, r }
})

describe("Worker fast path", () => {
  it.effect("the worker's node:crypto signature header is WebhookSignature.sign's, for one secret and for two", () =>
    Effect.gen(function*() {
      const body = JSON.stringify({ id: "evt_1", type: "lab_result.received", data: { note: "ünïcode ✓" } })
      for (const secrets of [["whsec_one"], ["whsec_new", "whsec_old"]]) {
        const header = signatureHeader(secrets, 1768478400, body)
        assert.strictEqual(header, yield* WebhookSignature.sign(secrets, 1768478400, body))
      }
    }))

  it.scoped("with the worker here, simulate queues deliveries already held by it and sends them without a claim", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const hooks = yield* receiver([200])
      hooks.delayMs = 300
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const hook = yield* subscribe(access, hooks.url)
      const webhookStore = yield* WebhookStore
      const dispatcher = yield* WebhookDispatcher
      yield* startWorker
      const r = yield* call("POST", `/v1/sandbox/${linked.connection_id}/simulate`, {
        token: access,
        json: { scenario: "lab_result_received", params: {} }
      })
      assert.strictEqual(r.body.data.deliveries, 1)
      yield* until("the attempt to start", Effect.sync(() => hooks.received.length === 1))
      // In flight: written with the worker's lease, so no claim can take it meanwhile.
      const inFlight = (yield* webhookStore.listWebhookDeliveries(hook.id, 0, 10)).items
      assert.deepStrictEqual(inFlight.map((d) => [d.status, d.attempts, d.locked_until]), [
        ["pending", 0, T0 + 60_000]
      ])
      assert.strictEqual(yield* dispatcher.runDue, 0)
      yield* until(
        "the attempt to be recorded",
        Effect.map(webhookStore.listWebhookDeliveries(hook.id, 0, 10), (page) => page.items[0]?.status === "succeeded")
      )
      const after = (yield* webhookStore.listWebhookDeliveries(hook.id, 0, 10)).items
      assert.deepStrictEqual(after.map((d) => [d.status, d.attempts, d.locked_until]), [["succeeded", 1, null]])
      assert.strictEqual(hooks.received.length, 1)
      assert.strictEqual(hooks.received[0]!.headers["x-tracebridge-event-id"], r.body.data.event.id)
      const got = hooks.received[0]!
      yield* WebhookSignature.verify(got.body, got.headers["x-tracebridge-signature"] as string, [hook.secret])
    }).pipe(Effect.provide(webhookApp())))

  it.scoped("held deliveries never handed over wait for their lease; handed to a stopped worker, they are due at once", () =>
    Effect.gen(function*() {
      const { dispatcher, enqueue, hooks, r } = yield* handOverSetup

      const worker = yield* startWorker
      const lost = yield* enqueue("evt_lost_handover")
      const late = yield* enqueue("evt_late_handover")
      assert.deepStrictEqual([lost.deliveries, late.deliveries], [1, 1])
      // The worker stops; `lost.send` never runs (as if the process died after the commit).
      yield* Fiber.interrupt(worker)
      assert.isUndefined(yield* dispatcher.holdUntil)
      // Handed to a stopped worker: back in the queue, due as queued, claimed by the next run.
      yield* late.send
      assert.strictEqual(yield* dispatcher.runDue, 1)
      assert.deepStrictEqual(hooks.received.map((h) => h.headers["x-tracebridge-event-id"]), [
        r.body.data.event.id,
        "evt_late_handover"
      ])
      // The other is held until its lease (60 s) lapses, then any worker claims it.
      yield* TestClock.adjust(Duration.seconds(59))
      assert.strictEqual(yield* dispatcher.runDue, 0)
      yield* TestClock.adjust(Duration.seconds(1))
      assert.strictEqual(yield* dispatcher.runDue, 1)
      assert.strictEqual(hooks.received[2]!.headers["x-tracebridge-event-id"], "evt_lost_handover")
      assert.strictEqual(hooks.received.length, 3)
    }).pipe(Effect.provide(webhookApp())))
})

describe("Worker fast path, late", () => {
  it.scoped("a hand-over that comes when the lease no longer covers an attempt is left for a claim, sent once", () =>
    Effect.gen(function*() {
      const { dispatcher, enqueue, hooks, r } = yield* handOverSetup
      yield* startWorker
      const late = yield* enqueue("evt_late")
      // 51 s later (say, behind slow receivers) only 9 s of the 60 s lease are left: less than the
      // 10 s an attempt may take. The worker does not send it from memory.
      yield* TestClock.adjust(Duration.seconds(51))
      yield* late.send
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
      assert.strictEqual(hooks.received.length, 1)
      assert.strictEqual(yield* dispatcher.runDue, 0)
      yield* TestClock.adjust(Duration.seconds(9))
      assert.strictEqual(yield* dispatcher.runDue, 1)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      assert.deepStrictEqual(hooks.received.map((h) => h.headers["x-tracebridge-event-id"]), [
        r.body.data.event.id,
        "evt_late"
      ])
    }).pipe(Effect.provide(webhookApp())))
})

/**
 * A sandbox connection read as a production one by the poller, through the real port with every
 * whole-list read it asks for counted (the resource, its query, and whether it ran as background work).
 */
const countedPoller = Effect.gen(function*() {
  const { access } = yield* signIn
  const linked = yield* linkSandbox(access)
  const connectionStore = yield* ConnectionStore
  const providers = yield* Providers
  const poller = yield* WebhookPoller
  const stored = Option.getOrThrow(yield* connectionStore.getConnection(linked.connection_id))
  const production = { ...stored, is_sandbox: false }
  const real = Option.getOrThrow(yield* providers.port(stored.provider, true))
  const reads: Array<{ readonly resource: string; readonly query: unknown; readonly background: boolean }> = []
  const port = {
    ...real,
    listAll: ((resource, session, facilityId, query) =>
      Effect.flatMap(UpstreamGovernor.isBackground, (background) => {
        reads.push({ resource, query, background })
        return real.listAll(resource, session, facilityId, query)
      })) as typeof real.listAll
  }
  const session = yield* providers.session(stored)
  const world = providers.state.world(stored)
  return { access, poller, port, production, providers, reads, real, session, stored, world }
})

describe("Production poller", () => {
  it.effect(
    "reconciles transfer and lab-result lists against the last snapshot and emits the same events",
    () =>
      Effect.gen(function*() {
        // The emulator, read through the real adapter, as if this were a production connection.
        const { access, poller, port, production, providers, session, stored, world } = yield* countedPoller
        const hook = yield* subscribe(access, "http://127.0.0.1:9/hooks", [
          "transfer.arrived",
          "transfer.completed",
          "lab_result.received"
        ])
        const webhookStore = yield* WebhookStore
        const run = (name: string, params: unknown = {}) => {
          const result = providers.sandbox.apply<Scenario.Outcome, Scenario.Failure>(world, {
            _tag: "Scenario",
            input: { name, params, at: T0 + 60_000 }
          })
          assert.isTrue(Either.isRight(result), JSON.stringify(result))
          return Either.getOrThrow(result)
        }

        assert.deepStrictEqual(yield* poller.reconcile(production, port, session), [], "the first poll is a baseline")
        // the changes happen a minute later, and the next poll reads the lastModified windows up to then
        yield* TestClock.adjust(Duration.minutes(2))
        const arrived = run("transfer_arrived")
        const tested = run("lab_result_received", { result: "fail" })
        // two processes polling at once: only the first to store its snapshot reports the changes
        const [one, other] = yield* Effect.all(
          [poller.reconcile(production, port, session), poller.reconcile(production, port, session)],
          { concurrency: "unbounded" }
        )
        assert.isTrue(one.length === 0 || other.length === 0, `both polls reported: ${one.length}, ${other.length}`)
        const events = [...one, ...other]
        assert.deepStrictEqual(events.map((e) => e.type).sort(), ["lab_result.received", "transfer.arrived"])
        const transfer = events.find((e) => e.type === "transfer.arrived")!
        assert.isTrue(transfer.type === "transfer.arrived" && arrived.change?.type === "transfer.arrived")
        if (transfer.type === "transfer.arrived" && arrived.change?.type === "transfer.arrived") {
          assert.strictEqual(transfer.data.id, arrived.change.data.id)
          assert.strictEqual(transfer.data.connection_id, stored.id)
          assert.isNotNull(transfer.data.transfer.actual_arrival)
        }
        const lab = events.find((e) => e.type === "lab_result.received")!
        if (lab.type === "lab_result.received" && tested.change?.type === "lab_result.received") {
          assert.strictEqual(lab.data.id, tested.change.data.id)
          assert.isFalse(lab.data.passed)
          assert.deepStrictEqual(lab.data.failed_panel, ["Microbiologicals", "Pesticides"])
          assert.strictEqual(lab.data.package_tag, tested.change.data.package_tag)
        } else assert.fail("no lab_result.received")

        assert.deepStrictEqual(yield* poller.reconcile(production, port, session), [], "nothing new, nothing sent")
        const arrivedId = arrived.change?.type === "transfer.arrived" ? arrived.change.data.id : ""
        run("transfer_completed", { transfer_id: arrivedId, outcome: "rejected" })
        const completed = yield* poller.reconcile(production, port, session)
        assert.deepStrictEqual(completed.map((e) => [e.type, "id" in e.data ? e.data.id : ""]), [[
          "transfer.completed",
          arrivedId
        ]])

        const queued = yield* webhookStore.listWebhookDeliveries(hook.id, 0, 10)
        assert.strictEqual(queued.total, 3)
        assert.deepStrictEqual(
          queued.items.map((d) => d.event_id).sort(),
          [...events, ...completed].map((e) => e.id).sort()
        )
      }).pipe(
        (program) => Effect.zipRight(TestClock.setTime(T0), Effect.provide(program, webhookApp()))
      ),
    60_000
  )
})

describe("Production poller, incremental (issue #35)", () => {
  it.effect(
    "after its baseline, a poll reads only what changed since the last one, and still reports a change",
    () =>
      Effect.gen(function*() {
        const { poller, port, production, providers, reads, session, world } = yield* countedPoller

        assert.deepStrictEqual(yield* poller.reconcile(production, port, session), [], "the first poll is a baseline")
        assert.isAbove(reads.length, 0)
        assert.isTrue(reads.every((r) => JSON.stringify(r.query) === "{}"), "the baseline reads the whole lists")
        // the poller is background work: the governor keeps room for interactive calls beside it
        assert.isTrue(
          reads.every((r) => r.background),
          "the poller's reads run as background work"
        )

        yield* TestClock.adjust(Duration.minutes(15))
        const arrived = providers.sandbox.apply<Scenario.Outcome, Scenario.Failure>(world, {
          _tag: "Scenario",
          input: { name: "transfer_arrived", params: {}, at: T0 + 14 * 60_000 }
        })
        assert.isTrue(Either.isRight(arrived), JSON.stringify(arrived))
        reads.length = 0
        const events = yield* poller.reconcile(production, port, session)
        assert.isAbove(reads.length, 0)
        // from the last poll (T0), less a margin for the provider's clock and whole-second markers
        for (const r of reads) {
          const since = (r.query as { readonly updated_since?: string }).updated_since
          assert.isDefined(since, `${r.resource}: read since the last poll, not whole`)
          assert.isAtMost(Date.parse(since!), T0)
          assert.isAtLeast(Date.parse(since!), T0 - 15 * 60_000)
        }
        assert.deepStrictEqual(events.map((e) => e.type), ["transfer.arrived"])
        assert.deepStrictEqual(yield* poller.reconcile(production, port, session), [], "nothing new, nothing sent")
      }).pipe(
        (program) => Effect.zipRight(TestClock.setTime(T0), Effect.provide(program, webhookApp()))
      ),
    60_000
  )
})

describe("Production poller, baseline from the synced store (issue #35)", () => {
  it.effect(
    "a connection the sync holds live takes its baseline from the store, with no list read upstream, and still reports a later change once",
    () =>
      Effect.gen(function*() {
        const { poller, port, production, providers, reads, real, session, stored, world } = yield* countedPoller
        const store = yield* SyncStore.SyncStore
        // What a live sync holds: each facility's transfers and lab results, stored up to T0 − 1 min
        const syncedThrough = T0 - 60_000
        const facilities = (yield* real.listFacilities(session, { page: 1, per_page: 100 })).items
        let transfersStored = 0
        for (const facility of facilities) {
          yield* store.ensureFacility(stored.id, facility.id, syncedThrough)
          for (const resource of ["transfers", "lab_results"] as const) {
            const items: ReadonlyArray<{ readonly id: string }> = resource === "transfers"
              ? yield* real.listAll("transfers", session, facility.id, {})
              : yield* real.listAll("lab_results", session, facility.id, {})
            if (resource === "transfers") transfersStored += items.length
            yield* store.putResource({
              connection_id: stored.id,
              facility_id: facility.id,
              resource,
              generation: 0,
              status: "live",
              target: null,
              window_from: null,
              page: 1,
              backfilled_through: syncedThrough,
              synced_through: syncedThrough,
              last_synced_at: syncedThrough,
              count: 0,
              last_error: null
            })
            yield* store.apply({
              connection_id: stored.id,
              facility_id: facility.id,
              resource,
              generation: 0,
              objects: items.map((o) => ({ object_id: o.id, body: JSON.stringify(o) })),
              cursor: {},
              now: syncedThrough
            })
          }
        }
        assert.isAbove(transfersStored, 0, "the world has transfers to baseline")

        assert.deepStrictEqual(yield* poller.reconcile(production, port, session), [], "the first poll is a baseline")
        assert.deepStrictEqual(reads, [], "the baseline read no list upstream")
        const snapshot = Option.getOrThrow(yield* (yield* WebhookStore).getPollSnapshot(stored.id))
        assert.strictEqual(snapshot.polled_at, syncedThrough, "stamped with the time the store holds changes up to")
        assert.strictEqual(
          Object.keys((JSON.parse(snapshot.snapshot) as { transfers: object }).transfers).length > 0,
          true
        )

        yield* TestClock.adjust(Duration.minutes(2))
        const arrived = providers.sandbox.apply<Scenario.Outcome, Scenario.Failure>(world, {
          _tag: "Scenario",
          input: { name: "transfer_arrived", params: {}, at: T0 + 60_000 }
        })
        assert.isTrue(Either.isRight(arrived), JSON.stringify(arrived))
        const events = yield* poller.reconcile(production, port, session)
        assert.isAbove(reads.length, 0)
        for (const r of reads) {
          const since = (r.query as { readonly updated_since?: string }).updated_since
          assert.isDefined(since, `${r.resource}: read since the store's time, not whole`)
          // from before what the store held (its time, less the margin)
          assert.isAtMost(Date.parse(since!), syncedThrough)
        }
        assert.deepStrictEqual(events.map((e) => e.type), ["transfer.arrived"])
        assert.deepStrictEqual(yield* poller.reconcile(production, port, session), [], "nothing new, nothing sent")
      }).pipe(
        (program) => Effect.zipRight(TestClock.setTime(T0), Effect.provide(program, webhookApp()))
      ),
    60_000
  )
})

/** An event simulated on a sandbox connection (one delivery per subscribed endpoint). */
const simulate = (access: string, connectionId: string) =>
  Effect.map(
    call("POST", `/v1/sandbox/${connectionId}/simulate`, {
      token: access,
      json: { scenario: "lab_result_received", params: {} }
    }),
    (r) => {
      assert.strictEqual(r.status, 200, JSON.stringify(r.body))
      return r.body.data as { deliveries: number; event: { id: string } }
    }
  )

const deliveriesOf = (hookId: string) =>
  Effect.flatMap(WebhookStore, (store) => store.listWebhookDeliveries(hookId, 0, 100))

describe("Bounded delivery (issue #28)", () => {
  it.live(
    "a receiver's answer is read up to 64 KB: a huge one is dropped early, and 1 KB of it at most is logged",
    () =>
      Effect.gen(function*() {
        const huge = yield* hostile({ mode: "huge", totalBytes: 256 * 1024 * 1024 })
        const failing = yield* hostile({ mode: "huge", status: 500, totalBytes: 8 * 1024 * 1024 })
        const { access } = yield* signIn
        const linked = yield* linkSandbox(access)
        const ok = yield* subscribe(access, huge.url)
        const ko = yield* subscribe(access, failing.url)
        assert.strictEqual((yield* simulate(access, linked.connection_id)).deliveries, 2)
        const dispatcher = yield* WebhookDispatcher
        const started = Date.now()
        assert.strictEqual(yield* dispatcher.runDue, 2)
        assert.isBelow(Date.now() - started, 5_000)
        // Written only as fast as it is read: reading 256 MB would have sent it all.
        assert.isBelow(huge.bytesSent, 32 * 1024 * 1024, `sent ${huge.bytesSent} bytes`)
        for (let i = 0; i < 100 && huge.open + failing.open > 0; i++) yield* Effect.sleep("20 millis")
        assert.strictEqual(huge.open + failing.open, 0, "the connections were dropped")
        const good = (yield* deliveriesOf(ok.id)).items
        assert.deepStrictEqual(good.map((d) => [d.status, d.attempts]), [["succeeded", 1]])
        const bad = (yield* deliveriesOf(ko.id)).items[0]!
        assert.deepStrictEqual([bad.status, bad.attempts], ["pending", 1])
        const webhookStore = yield* WebhookStore
        const [logged] = yield* webhookStore.listWebhookAttempts([bad.id])
        assert.strictEqual(logged?.status_code, 500)
        assert.match(logged?.error ?? "", /^answered 500: x+…$/)
        assert.isAtMost(Buffer.byteLength(logged?.error ?? "", "utf8"), 1024)
      }).pipe(Effect.provide(webhookApp()), Effect.scoped),
    30_000
  )

  it.scoped(
    "connect, headers and body have 10 s together: a trickling body is cut off at the deadline",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const slow = yield* hostile({ mode: "trickle" })
        const { access } = yield* signIn
        const linked = yield* linkSandbox(access)
        const hook = yield* subscribe(access, slow.url)
        yield* simulate(access, linked.connection_id)
        const dispatcher = yield* WebhookDispatcher
        const run = yield* Effect.fork(dispatcher.runDue)
        yield* until("the attempt to start", Effect.sync(() => slow.requests === 1))
        yield* TestClock.adjust(Duration.seconds(10))
        assert.strictEqual(yield* Fiber.join(run), 1)
        const [d] = (yield* deliveriesOf(hook.id)).items
        assert.deepStrictEqual([d?.status, d?.attempts, d?.next_attempt_at], ["pending", 1, T0 + 10_000 + 60_000])
        const [logged] = yield* Effect.flatMap(WebhookStore, (s) => s.listWebhookAttempts([d!.id]))
        assert.strictEqual(logged?.error, "timed out after 10 s")
        yield* until("the connection to be dropped", Effect.sync(() => slow.open === 0))
      }).pipe(Effect.provide(webhookApp())),
    10_000
  )

  it.scoped(
    "a shutdown abandons an attempt in flight at once, and leaves it due for a retry",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const stuck = yield* hostile({ mode: "hang" })
        const { access } = yield* signIn
        const linked = yield* linkSandbox(access)
        const hook = yield* subscribe(access, stuck.url)
        const worker = yield* startWorker
        yield* simulate(access, linked.connection_id)
        yield* until("the attempt to start", Effect.sync(() => stuck.requests === 1))
        const before = Date.now()
        yield* Fiber.interrupt(worker)
        assert.isBelow(Date.now() - before, 2_000)
        const [d] = (yield* deliveriesOf(hook.id)).items
        assert.deepStrictEqual([d?.status, d?.attempts, d?.claims, d?.next_attempt_at, d?.locked_until], [
          "pending",
          1,
          1,
          T0,
          null
        ])
        const [logged] = yield* Effect.flatMap(WebhookStore, (s) => s.listWebhookAttempts([d!.id]))
        assert.match(logged?.error ?? "", /^abandoned/)
        yield* until("the connection to be dropped", Effect.sync(() => stuck.open === 0))
      }).pipe(Effect.provide(webhookApp())),
    10_000
  )

  it.scoped(
    "a shutdown gives attempts in flight the grace period, then abandons them, due again at once",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0)
        const stuck = yield* hostile({ mode: "hang" })
        const slow = yield* receiver([200])
        slow.delayMs = 300
        const { access } = yield* signIn
        const linked = yield* linkSandbox(access)
        const stuckHook = yield* subscribe(access, stuck.url)
        const slowHook = yield* subscribe(access, slow.url)
        const dispatcher = yield* WebhookDispatcher
        const worker = yield* Effect.fork(dispatcher.loop(Duration.hours(1), Duration.seconds(5)))
        yield* until("the worker to start", Effect.map(dispatcher.holdUntil, (h) => h !== undefined))
        yield* simulate(access, linked.connection_id)
        yield* until("both attempts to start", Effect.sync(() => stuck.requests === 1 && slow.received.length === 1))
        const stopping = yield* Effect.fork(Fiber.interrupt(worker))
        // Within the grace period the slow receiver's attempt ends and is recorded.
        yield* until(
          "the slow attempt to end",
          Effect.map(deliveriesOf(slowHook.id), (page) => page.items[0]?.status === "succeeded")
        )
        assert.isNull(stopping.unsafePoll(), "the worker waits for the grace period")
        // The grace period (5 s on the clock) ends: the hanging attempt is abandoned at once.
        for (let i = 0; i < 100 && stopping.unsafePoll() === null; i++) {
          yield* TestClock.adjust(Duration.seconds(1))
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
        }
        yield* Fiber.join(stopping)
        const [d] = (yield* deliveriesOf(stuckHook.id)).items
        const abandonedAt = d?.next_attempt_at ?? 0
        assert.deepStrictEqual([d?.status, d?.attempts, d?.claims, d?.locked_until], ["pending", 1, 1, null])
        assert.isTrue(abandonedAt >= T0 + 5_000 && abandonedAt <= T0 + 10_000, `due at ${abandonedAt - T0}`)
        const [logged] = yield* Effect.flatMap(WebhookStore, (s) => s.listWebhookAttempts([d!.id]))
        assert.match(logged?.error ?? "", /^abandoned/)
        yield* until("the connection to be dropped", Effect.sync(() => stuck.open === 0))
      }).pipe(Effect.provide(webhookApp())),
    10_000
  )

  it.scoped("one organisation's hanging receiver never holds up another's deliveries", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const stuck = yield* hostile({ mode: "hang" })
      const fine = yield* receiver([200])
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      yield* subscribe(access, stuck.url)
      for (let i = 0; i < 12; i++) yield* simulate(access, linked.connection_id)
      // Then another organisation's event, due after all of the first's.
      yield* TestClock.adjust(Duration.seconds(1))
      const other = yield* otherOrganisation
      const otherLinked = yield* linkSandbox(other)
      yield* subscribe(other, fine.url)
      yield* simulate(other, otherLinked.connection_id)
      const dispatcher = yield* WebhookDispatcher
      const run = yield* Effect.fork(dispatcher.runDue)
      yield* until("the other organisation's delivery", Effect.sync(() => fine.received.length === 1))
      // At most PER_ENDPOINT attempts at the hanging endpoint at once: they all arrive (on a busy
      // machine some after the other organisation's delivery), and no fifth follows.
      yield* until("four attempts at the hanging endpoint", Effect.sync(() => stuck.requests >= 4))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      assert.strictEqual(stuck.requests, 4)
      yield* Fiber.interrupt(run)
    }).pipe(Effect.provide(webhookApp())), 10_000)

  it.scoped("a delivery whose attempts never finished (the process died in them) is dead-lettered, not sent", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const hooks = yield* receiver([200])
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const hook = yield* subscribe(access, hooks.url)
      yield* simulate(access, linked.connection_id)
      const webhookStore = yield* WebhookStore
      const dispatcher = yield* WebhookDispatcher
      // Three processes claimed it and died mid-attempt: their leases lapse, nothing recorded.
      for (let i = 0; i < 3; i++) {
        const now = T0 + i * 61_000
        assert.strictEqual((yield* webhookStore.claimWebhookDeliveries(now, now + 60_000, 10)).length, 1)
        yield* TestClock.adjust(Duration.seconds(61))
      }
      assert.strictEqual(yield* dispatcher.runDue, 1)
      assert.strictEqual(hooks.received.length, 0)
      const [d] = (yield* deliveriesOf(hook.id)).items
      assert.deepStrictEqual([d?.status, d?.attempts, d?.claims, d?.next_attempt_at], ["failed", 1, 4, null])
      const [logged] = yield* webhookStore.listWebhookAttempts([d!.id])
      assert.match(logged?.error ?? "", /^dead-lettered after 3 attempts/)
      // An operator's redelivery forgives them: it is sent once more.
      yield* webhookStore.retryWebhookDelivery(d!.id, T0 + 200_000)
      yield* TestClock.adjust(Duration.seconds(100))
      assert.strictEqual(yield* dispatcher.runDue, 1)
      assert.strictEqual(hooks.received.length, 1)
    }).pipe(Effect.provide(webhookApp())))
})
