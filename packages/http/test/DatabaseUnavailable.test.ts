/**
 * A database the service cannot have (issue #28, "the database never wedges"; DECISIONS "Database
 * or service down"): another connection holds the embedded SQLite's write lock past
 * `TRACEBRIDGE_DATABASE_WAIT_MS`, as the operator CLI's `reencrypt` can.
 *
 * - A request that needs the database answers 503 `api_error` / `service_unavailable` with
 *   `Retry-After`, within its wait: never a 500 and never a hang.
 * - `/healthz` answers 503 while the database cannot be had, and 200 again after.
 * - Once the lock is given back, the same requests work: nothing stayed wedged.
 */
import { assert, describe, it } from "@effect/vitest"
import { Http, Server } from "@tracebridge/http"
import { ConfigProvider, Effect, Layer, Logger } from "effect"
import NativeDatabase from "libsql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import * as Database from "../src/persistence/Database.js"
import * as Crypto from "../src/services/Crypto.js"
import { call, signIn } from "./support/TestApp.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-unavailable-test-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const file = path.join(dir, Database.sqliteFileName)

/** Every line logged, in logfmt. */
const logged: Array<string> = []
const recorder = Logger.replace(
  Logger.defaultLogger,
  Logger.make((options) => logged.push(Logger.logfmtLogger.log(options)))
)

/** The whole service on `file`, waiting at most 400 ms for its database. */
const app = Http.HttpLive.pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(Layer.orDie(Database.layerSqlite(file))),
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ TRACEBRIDGE_DATABASE_WAIT_MS: "400" }))),
  Layer.provide(recorder)
)

/** Another connection to the file holding its write lock until `release`. */
const holdWriteLock = () => {
  const other = new NativeDatabase(file)
  other.exec("BEGIN IMMEDIATE")
  return {
    release: () => {
      other.exec("ROLLBACK")
      other.close()
    }
  }
}

describe("a database the service cannot have", () => {
  it.live(
    "answers 503 service_unavailable with Retry-After within the wait, and recovers when it is back",
    () =>
      Effect.gen(function*() {
        const me = yield* signIn
        const subscribe = () =>
          call("POST", "/v1/webhooks", {
            token: me.access,
            json: { url: "http://127.0.0.1:9/hook", events: ["transfer.arrived"] }
          })
        const lock = holdWriteLock()
        try {
          const started = Date.now()
          const refused = yield* subscribe()
          const took = Date.now() - started
          assert.strictEqual(refused.status, 503, JSON.stringify(refused.body))
          assert.strictEqual(refused.body.error.type, "api_error")
          assert.strictEqual(refused.body.error.code, "service_unavailable")
          assert.strictEqual(refused.body.error.request_id, refused.headers["x-request-id"])
          assert.isAtLeast(Number(refused.headers["retry-after"]), 1)
          assert.isBelow(took, 5_000, "answered within the wait, not held")
          // the log line says why, and names the request the client was told about (issue #30)
          const line = logged.find((l) => l.includes("database unavailable"))
          assert.isDefined(line)
          assert.include(line, `request_id=${refused.headers["x-request-id"]}`)
          const health = yield* call("GET", "/healthz")
          assert.strictEqual(health.status, 503, JSON.stringify(health.body))
          assert.strictEqual(health.body.error.code, "service_unavailable")
        } finally {
          lock.release()
        }
        const health = yield* call("GET", "/healthz")
        assert.strictEqual(health.status, 200)
        assert.deepStrictEqual(health.body, { status: "ok" })
        const created = yield* subscribe()
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
      }).pipe(Effect.provide(app)),
    30_000
  )
})
