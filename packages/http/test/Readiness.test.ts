/**
 * `/livez` and `/readyz` (issue #32; DECISIONS "Turn 3 additions"): what each answers, the reason
 * `/readyz` names for each way a node is not ready, `Cache-Control: no-store`, and neither in the
 * `/v1` document.
 */
import { assert, describe, it } from "@effect/vitest"
import { Http, Server } from "@tracebridge/http"
import { ConfigProvider, Effect, Fiber, Layer, Logger } from "effect"
import NativeDatabase from "libsql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import * as Database from "../src/persistence/Database.js"
import { table } from "../src/persistence/MigrationState.js"
import * as Readiness from "../src/Readiness.js"
import * as Crypto from "../src/services/Crypto.js"
import { call } from "./support/TestApp.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-readiness-test-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** The whole service on a fresh SQLite file, waiting at most 400 ms for its database. */
const appOn = (file: string, worker: boolean) =>
  Http.makeHttpLive({ worker }).pipe(
    Layer.provideMerge(Server.layerTest),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(Layer.orDie(Database.layerSqlite(file))),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ TRACEBRIDGE_DATABASE_WAIT_MS: "400" }))),
    Layer.provide(Logger.remove(Logger.defaultLogger))
  )

let files = 0
const fresh = () => path.join(dir, `db-${++files}`, Database.sqliteFileName)

const unavailable = (reason: Readiness.Reason) => ({ status: "unavailable", reason })

describe("/livez and /readyz", () => {
  it.live("answer 200 ok with no-store, and are not in the /v1 document", () => {
    const file = fresh()
    return Effect.gen(function*() {
      const live = yield* call("GET", "/livez")
      assert.strictEqual(live.status, 200)
      assert.deepStrictEqual(live.body, { status: "ok" })
      assert.strictEqual(live.headers["cache-control"], "no-store")
      const ready = yield* call("GET", "/readyz")
      assert.strictEqual(ready.status, 200, JSON.stringify(ready.body))
      assert.deepStrictEqual(ready.body, { status: "ok" })
      assert.strictEqual(ready.headers["cache-control"], "no-store")
      const document = yield* call("GET", "/v1/openapi.json")
      assert.strictEqual(document.status, 200)
      const paths = Object.keys(document.body.paths)
      assert.notInclude(paths, "/livez")
      assert.notInclude(paths, "/readyz")
    }).pipe(Effect.provide(appOn(file, true)))
  }, 30_000)

  it.live("/readyz is 503 draining once the node drains; /livez stays 200", () => {
    const file = fresh()
    return Effect.gen(function*() {
      const readiness = yield* Readiness.Readiness
      assert.strictEqual((yield* call("GET", "/readyz")).status, 200)
      yield* readiness.drain
      const ready = yield* call("GET", "/readyz")
      assert.strictEqual(ready.status, 503)
      assert.deepStrictEqual(ready.body, unavailable("draining"))
      assert.strictEqual(ready.headers["cache-control"], "no-store")
      assert.strictEqual((yield* call("GET", "/livez")).status, 200)
    }).pipe(Effect.provide(appOn(file, false)))
  }, 30_000)

  it.live("/readyz is 503 database while the database cannot be had, 200 again after; /livez stays 200", () => {
    const file = fresh()
    return Effect.gen(function*() {
      assert.strictEqual((yield* call("GET", "/readyz")).status, 200)
      const other = new NativeDatabase(file)
      other.exec("BEGIN IMMEDIATE")
      try {
        const started = Date.now()
        const ready = yield* call("GET", "/readyz")
        assert.isBelow(Date.now() - started, 5_000)
        assert.strictEqual(ready.status, 503)
        assert.deepStrictEqual(ready.body, unavailable("database"))
        assert.strictEqual((yield* call("GET", "/livez")).status, 200)
      } finally {
        other.exec("ROLLBACK")
        other.close()
      }
      assert.strictEqual((yield* call("GET", "/readyz")).status, 200)
    }).pipe(Effect.provide(appOn(file, false)))
  }, 30_000)

  it.live("/readyz is 503 migrations when the database lacks a migration the code knows", () => {
    const file = fresh()
    return Effect.gen(function*() {
      assert.strictEqual((yield* call("GET", "/readyz")).status, 200)
      const other = new NativeDatabase(file)
      other.exec(`DELETE FROM ${table} WHERE migration_id = (SELECT MAX(migration_id) FROM ${table})`)
      other.close()
      const ready = yield* call("GET", "/readyz")
      assert.strictEqual(ready.status, 503)
      assert.deepStrictEqual(ready.body, unavailable("migrations"))
    }).pipe(Effect.provide(appOn(file, false)))
  }, 30_000)
})

describe("Readiness", () => {
  it.effect("names the watched workers that have ended, and no others", () =>
    Effect.gen(function*() {
      const readiness = yield* Readiness.make
      const running = yield* Effect.fork(Effect.never)
      const ended = yield* Effect.fork(Effect.void)
      yield* readiness.watch("dispatcher", running)
      yield* readiness.watch("scheduler", ended)
      yield* Fiber.await(ended)
      assert.deepStrictEqual(yield* readiness.stopped, ["scheduler"])
      yield* Fiber.interrupt(running)
      assert.deepStrictEqual(yield* readiness.stopped, ["dispatcher", "scheduler"])
      assert.isFalse(yield* readiness.draining)
      yield* readiness.drain
      assert.isTrue(yield* readiness.draining)
    }))
})
