/**
 * Two worker processes on one Postgres database (two pools, two dispatchers) share the outbox:
 * every delivery is sent exactly once (`FOR UPDATE SKIP LOCKED` claims). Runs with
 * `npm run test:pg` (TEST_DATABASE_URL), in a fresh schema of its own.
 */
import { FetchHttpClient } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { Accounts } from "../src/persistence/Accounts.js"
import * as Database from "../src/persistence/Database.js"
import { WebhookStore } from "../src/persistence/WebhookStore.js"
import * as Crypto from "../src/services/Crypto.js"
import * as UrlGuard from "../src/services/UrlGuard.js"
import * as WebhookDispatcher from "../src/services/WebhookDispatcher.js"
import { freshSchema, testDatabaseUrl } from "./support/PgSchema.js"
import { receiver } from "./support/Receiver.js"

const url = testDatabaseUrl("Webhooks.pg.test.ts")
describe("Webhook workers (Postgres)", () => {
  it.live("two worker processes never send the same attempt twice", () =>
    Effect.gen(function*() {
      const hooks = yield* receiver([200])
      hooks.delayMs = 25
      const scoped = new URL(yield* freshSchema(url, "webhooks"))

      const crypto = Crypto.make([randomBytes(32)])
      // One "process": its own pool, its own dispatcher.
      const processLayer = () =>
        WebhookDispatcher.layer.pipe(
          Layer.provide([UrlGuard.layer, FetchHttpClient.layer, Layer.succeed(Crypto.Crypto, crypto)]),
          Layer.provideMerge(Database.layerPg(scoped.href))
        )

      const n = 60
      const setup = Effect.gen(function*() {
        const accounts = yield* Accounts
        const webhookStore = yield* WebhookStore
        yield* accounts.insertOrganisation({ id: "org_pg", name: "Pg", plan: "sandbox", created_at: 0 })
        const sealed = crypto.encrypt("whsec_pg")
        yield* webhookStore.insertWebhookEndpoint({
          id: "wh_pg",
          organisation_id: "org_pg",
          url: hooks.url,
          events: JSON.stringify(["transfer.arrived"]),
          description: null,
          status: "enabled",
          secret: sealed.ciphertext,
          key_id: sealed.keyId,
          previous_secret: null,
          previous_key_id: null,
          previous_expires_at: null,
          created_at: 0,
          updated_at: 0
        })
        for (let i = 0; i < n; i++) {
          yield* webhookStore.insertWebhookEvent({
            id: `evt_pg_${i}`,
            organisation_id: "org_pg",
            connection_id: "conn_pg",
            type: "transfer.arrived",
            body: JSON.stringify({ id: `evt_pg_${i}` }),
            created_at: 0,
            trace_parent: null
          }, [{
            id: `whd_pg_${String(i).padStart(3, "0")}`,
            organisation_id: "org_pg",
            endpoint_id: "wh_pg",
            event_id: `evt_pg_${i}`,
            event_type: "transfer.arrived",
            status: "pending",
            attempts: 0,
            claims: 0,
            next_attempt_at: 0,
            locked_until: null,
            created_at: 0,
            updated_at: 0
          }])
        }
      })
      yield* Effect.provide(setup, Database.layerPg(scoped.href))

      const work = Effect.flatMap(WebhookDispatcher.WebhookDispatcher, (d) =>
        Effect.all([d.runDue, d.runDue, d.runDue], { concurrency: 3 }))
      // Both processes are up (pools open, migrations done) before either starts working.
      const first = yield* Layer.build(processLayer())
      const second = yield* Layer.build(processLayer())
      const [a, b] = yield* Effect.all([Effect.provide(work, first), Effect.provide(work, second)], {
        concurrency: 2
      })
      const sent = [...a, ...b].reduce((x, y) =>
        x + y, 0)
      assert.strictEqual(sent, n)
      assert.isTrue(a.some((x) => x > 0) && b.some((x) => x > 0), `both processes worked: ${a} / ${b}`)
      assert.strictEqual(hooks.received.length, n)
      const ids = hooks.received.map((r) => r.headers["x-tracebridge-event-id"])
      assert.strictEqual(new Set(ids).size, n)

      const check = Effect.gen(function*() {
        const webhookStore = yield* WebhookStore
        const { items, total } = yield* webhookStore.listWebhookDeliveries("wh_pg", 0, 100)
        assert.strictEqual(total, n)
        assert.isTrue(items.every((d) => d.status === "succeeded" && d.attempts === 1))
        const attempts = yield* webhookStore.listWebhookAttempts(items.map((d) => d.id))
        assert.strictEqual(attempts.length, n)
        assert.isTrue(Option.isSome(yield* webhookStore.getWebhookDelivery("whd_pg_000")))
      })
      yield* Effect.provide(check, Database.layerPg(scoped.href))
    }).pipe(Effect.scoped), { timeout: 60_000 })
})
