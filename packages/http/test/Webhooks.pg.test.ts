/**
 * Two worker processes on one Postgres database (two pools, two dispatchers) share the outbox:
 * every delivery is sent exactly once (`FOR UPDATE SKIP LOCKED` claims). Runs with
 * `npm run test:pg` (TEST_DATABASE_URL), in a fresh schema of its own.
 */
import { FetchHttpClient } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Redacted } from "effect"
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
const crypto = Crypto.make([randomBytes(32)])

/** One "process": its own pool, its own dispatcher. */
const processLayer = (schema: string) =>
  WebhookDispatcher.layer.pipe(
    Layer.provide([UrlGuard.layer, FetchHttpClient.layer, Layer.succeed(Crypto.Crypto, crypto)]),
    Layer.provideMerge(Database.layerPg(schema))
  )

/** One organisation, one endpoint at `hookUrl`, and `n` deliveries due since 0 (`whd_pg_000`…). */
const seed = (schema: string, hookUrl: string, n: number) =>
  Effect.provide(
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const webhookStore = yield* WebhookStore
      yield* accounts.insertOrganisation({ id: "org_pg", name: "Pg", plan: "sandbox", created_at: 0 })
      const sealed = crypto.encrypt("whsec_pg")
      yield* webhookStore.insertWebhookEndpoint({
        id: "wh_pg",
        organisation_id: "org_pg",
        url: hookUrl,
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
    }),
    Database.layerPg(schema)
  )

describe("Webhook workers (Postgres)", () => {
  it.live("two worker processes never send the same attempt twice", () =>
    Effect.gen(function*() {
      const hooks = yield* receiver([200])
      hooks.delayMs = 25
      const scoped = new URL(yield* freshSchema(url, "webhooks"))
      const n = 60
      yield* seed(scoped.href, hooks.url, n)

      const work = Effect.flatMap(WebhookDispatcher.WebhookDispatcher, (d) =>
        Effect.all([d.runDue, d.runDue, d.runDue], { concurrency: 3 }))
      // Both processes are up (pools open, migrations done) before either starts working.
      const first = yield* Layer.build(processLayer(scoped.href))
      const second = yield* Layer.build(processLayer(scoped.href))
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

  // A claim that meets rows another process is claiming at that moment (locked, not yet leased)
  // skips them (`SKIP LOCKED`) and comes back empty. `runDue` must not take that for "nothing is
  // due": it looks again once the other claim has committed.
  it.live("runDue does not stop at rows another claim has locked for a moment", () =>
    Effect.gen(function*() {
      const hooks = yield* receiver([200])
      const scoped = new URL(yield* freshSchema(url, "webhooks_lock"))
      yield* seed(scoped.href, hooks.url, 4)
      const worker = yield* Layer.build(processLayer(scoped.href))
      const holder = yield* Layer.build(PgClient.layer({ url: Redacted.make(scoped.href) }))
      const locked = yield* Deferred.make<void>()
      // Another "claim" holds the four rows' locks for 300 ms, then lets go without changing them.
      const hold = Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT id FROM webhook_deliveries ORDER BY id FOR UPDATE`
          yield* Deferred.succeed(locked, undefined)
          yield* Effect.sleep("300 millis")
        })))
      const holding = yield* Effect.fork(Effect.provide(hold, holder))
      yield* Deferred.await(locked)
      const sent = yield* Effect.provide(Effect.flatMap(WebhookDispatcher.WebhookDispatcher, (d) => d.runDue), worker)
      yield* Fiber.join(holding)
      assert.strictEqual(sent, 4)
      assert.strictEqual(hooks.received.length, 4)
    }).pipe(Effect.scoped), { timeout: 30_000 })
})
