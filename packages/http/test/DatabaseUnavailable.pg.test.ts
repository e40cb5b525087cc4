/**
 * A database the service cannot have, on Postgres (issue #28; DECISIONS "Database or service
 * down"): another session (the operator CLI's `reencrypt`, a migration, a stuck transaction) holds
 * a lock a request needs past `TRACEBRIDGE_DATABASE_WAIT_MS`. The request answers 503
 * `service_unavailable` with `Retry-After` within the wait, instead of waiting for the lock as long
 * as it is held; once it is given back, the same request works.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Http, Server } from "@tracebridge/http"
import { ConfigProvider, Deferred, Effect, Fiber, Layer, Redacted } from "effect"
import * as Database from "../src/persistence/Database.js"
import * as Crypto from "../src/services/Crypto.js"
import { freshSchema, testDatabaseUrl } from "./support/PgSchema.js"
import { call, signIn } from "./support/TestApp.js"

const url = testDatabaseUrl("DatabaseUnavailable.pg.test.ts")

describe("a database the service cannot have (Postgres)", () => {
  it.live(
    "a lock held past the wait answers 503 service_unavailable, and the request works once it is free",
    () =>
      Effect.gen(function*() {
        const scoped = yield* freshSchema(url, "unavailable")
        const app = Http.HttpLive.pipe(
          Layer.provideMerge(Server.layerTest),
          Layer.provideMerge(Crypto.layerTest),
          Layer.provideMerge(Layer.orDie(Database.layerPg(Redacted.make(scoped)))),
          Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ TRACEBRIDGE_DATABASE_WAIT_MS: "500" })))
        )
        yield* Effect.gen(function*() {
          const me = yield* signIn
          const subscribe = call("POST", "/v1/webhooks", {
            token: me.access,
            json: { url: "http://127.0.0.1:9/hook", events: ["transfer.arrived"] }
          })
          // Another session takes the webhook table and keeps it until `release`.
          const locked = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const holder = yield* Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            yield* sql.withTransaction(
              Effect.gen(function*() {
                yield* sql.unsafe("LOCK TABLE webhook_endpoints IN ACCESS EXCLUSIVE MODE")
                yield* Deferred.succeed(locked, undefined)
                yield* Deferred.await(release)
              })
            )
          }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(scoped) })), Effect.orDie, Effect.fork)
          yield* Deferred.await(locked)
          const started = Date.now()
          const refused = yield* subscribe
          const took = Date.now() - started
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(holder)
          assert.strictEqual(refused.status, 503, JSON.stringify(refused.body))
          assert.strictEqual(refused.body.error.type, "api_error")
          assert.strictEqual(refused.body.error.code, "service_unavailable")
          assert.isAtLeast(Number(refused.headers["retry-after"]), 1)
          assert.isBelow(took, 5_000, "answered within the wait, not held for as long as the lock")
          const created = yield* subscribe
          assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        }).pipe(Effect.provide(app))
      }).pipe(Effect.scoped),
    30_000
  )
})
