/**
 * The outbox across a restart, the worker loop on its own (as the quickstart sees it), and the
 * production poller reconciling the emulator's lists as if it were a production state system.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { WebhookSignature } from "@tracebridge/core"
import { Http } from "@tracebridge/http"
import * as Database from "@tracebridge/http/persistence/Database"
import type { Scenario } from "@tracebridge/sandbox"
import { Effect, Either, Layer, Option, TestClock } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import { Repo } from "../src/persistence/Repo.js"
import * as Crypto from "../src/services/Crypto.js"
import { Providers } from "../src/services/Providers.js"
import { WebhookDispatcher } from "../src/services/WebhookDispatcher.js"
import { WebhookPoller } from "../src/services/WebhookPoller.js"
import { receiver } from "./support/Receiver.js"
import { call, linkSandbox, signIn } from "./support/TestApp.js"
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

describe("Production poller", () => {
  it.effect("reconciles transfer and lab-result lists against the last snapshot and emits the same events", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const hook = yield* subscribe(access, "http://127.0.0.1:9/hooks", [
        "transfer.arrived",
        "transfer.completed",
        "lab_result.received"
      ])
      const repo = yield* Repo
      const providers = yield* Providers
      const poller = yield* WebhookPoller
      const stored = Option.getOrThrow(yield* repo.getConnection(linked.connection_id))
      // The emulator, read through the real adapter, as if this were a production connection.
      const production = { ...stored, is_sandbox: false }
      yield* providers.prepare(stored)
      const port = Option.getOrThrow(yield* providers.port(stored.provider, true))
      const session = yield* providers.session(stored)
      const world = yield* providers.world(stored)
      const run = (name: string, params: unknown = {}) => {
        const result = providers.sandbox.apply<Scenario.Outcome, Scenario.Failure>(world, {
          _tag: "Scenario",
          input: { name, params, connection_id: stored.id, at: T0 + 60_000 }
        })
        assert.isTrue(Either.isRight(result), JSON.stringify(result))
        return Either.getOrThrow(result)
      }

      assert.deepStrictEqual(yield* poller.reconcile(production, port, session), [], "the first poll is a baseline")
      const arrived = run("transfer_arrived")
      const tested = run("lab_result_received", { result: "fail" })
      const events = yield* poller.reconcile(production, port, session)
      assert.deepStrictEqual(events.map((e) => e.type).sort(), ["lab_result.received", "transfer.arrived"])
      const transfer = events.find((e) => e.type === "transfer.arrived")!
      assert.isTrue(transfer.type === "transfer.arrived" && arrived.event?.type === "transfer.arrived")
      if (transfer.type === "transfer.arrived" && arrived.event?.type === "transfer.arrived") {
        assert.strictEqual(transfer.data.id, arrived.event.data.id)
        assert.strictEqual(transfer.data.connection_id, stored.id)
        assert.isNotNull(transfer.data.transfer.actual_arrival)
      }
      const lab = events.find((e) => e.type === "lab_result.received")!
      if (lab.type === "lab_result.received" && tested.event?.type === "lab_result.received") {
        assert.strictEqual(lab.data.id, tested.event.data.id)
        assert.isFalse(lab.data.passed)
        assert.deepStrictEqual(lab.data.failed_panel, ["Microbiologicals", "Pesticides"])
        assert.strictEqual(lab.data.package_tag, tested.event.data.package_tag)
      } else assert.fail("no lab_result.received")

      assert.deepStrictEqual(yield* poller.reconcile(production, port, session), [], "nothing new, nothing sent")
      const arrivedId = arrived.event?.type === "transfer.arrived" ? arrived.event.data.id : ""
      run("transfer_completed", { transfer_id: arrivedId, outcome: "rejected" })
      const completed = yield* poller.reconcile(production, port, session)
      assert.deepStrictEqual(completed.map((e) => [e.type, e.data.id]), [["transfer.completed", arrivedId]])

      const queued = yield* repo.listWebhookDeliveries(hook.id, 0, 10)
      assert.strictEqual(queued.total, 3)
      assert.deepStrictEqual(
        queued.items.map((d) => d.event_id).sort(),
        [...events, ...completed].map((e) => e.id).sort()
      )
    }).pipe(
      (program) => Effect.zipRight(TestClock.setTime(T0), Effect.provide(program, webhookApp()))
    ))
})
