/**
 * The stores' suite (`PersistenceSuite.ts`) against SQLite (libsql, in a temporary file), and how `Database` picks its backend from Config. The Postgres
 * run is `Persistence.pg.test.ts` (`npm run test:pg`).
 */
import { SqlClient } from "@effect/sql"
import { LibsqlClient } from "@effect/sql-libsql"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Option, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import { Accounts } from "../src/persistence/Accounts.js"
import * as Database from "../src/persistence/Database.js"
import { Transactions } from "../src/persistence/Transactions.js"
import { persistenceSuite } from "./PersistenceSuite.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-persistence-test-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

persistenceSuite("Persistence (SQLite)", Database.layerSqlite(path.join(dir, "suite", "tracebridge.db")), {
  rollback: true,
  isolated: Database.layerSqlite(":memory:")
})

const withEnv = (env: Record<string, string>) => Effect.withConfigProvider(ConfigProvider.fromJson(env))

describe("Database", () => {
  it.effect("uses SQLite in ./.tracebridge/tracebridge.db when nothing is configured", () =>
    Effect.gen(function*() {
      const backend = yield* Database.backend.pipe(withEnv({}))
      assert.deepStrictEqual(backend, { _tag: "Sqlite", file: path.join(".tracebridge", "tracebridge.db") })
      const empty = yield* Database.backend.pipe(withEnv({ DATABASE_URL: "", TRACEBRIDGE_DATA_DIR: "/var/tb" }))
      assert.deepStrictEqual(empty, { _tag: "Sqlite", file: "/var/tb/tracebridge.db" })
    }))

  it.effect("uses Postgres when DATABASE_URL is a postgres URL, keeping it redacted", () =>
    Effect.gen(function*() {
      for (const url of ["postgres://u:s3cret@db:5432/tb", "postgresql://u:s3cret@db/tb"]) {
        const backend = yield* Database.backend.pipe(withEnv({ DATABASE_URL: url }))
        assert.strictEqual(backend._tag, "Pg")
        assert.isTrue(backend._tag === "Pg" && Redacted.value(backend.url) === url)
        assert.notInclude(String(backend._tag === "Pg" ? backend.url : ""), "s3cret")
      }
    }))

  it.effect("refuses another kind of DATABASE_URL without echoing it", () =>
    Effect.gen(function*() {
      const result = yield* Effect.either(Database.backend.pipe(withEnv({ DATABASE_URL: "mysql://u:s3cret@db/tb" })))
      assert.isTrue(Either.isLeft(result))
      assert.include(String(Either.getLeft(result).pipe(Option.getOrThrow)), "DATABASE_URL")
      assert.notInclude(String(Either.getLeft(result).pipe(Option.getOrThrow)), "s3cret")
    }))

  it.effect("layer creates the data folder, migrates once and keeps the data across restarts", () =>
    Effect.gen(function*() {
      const dataDir = path.join(dir, "data", "deeper")
      const env = withEnv({ TRACEBRIDGE_DATA_DIR: dataDir })
      const o = { id: "org-restart", name: "Restart", plan: "sandbox" as const, created_at: 1_767_225_600_000 }
      yield* Effect.flatMap(Accounts, (accounts) => accounts.insertOrganisation(o)).pipe(
        Effect.provide(Database.layer),
        env
      )
      assert.isTrue(fs.existsSync(path.join(dataDir, "tracebridge.db")))
      const again = yield* Effect.flatMap(Accounts, (accounts) => accounts.getOrganisation(o.id)).pipe(
        Effect.provide(Database.layer),
        env
      )
      assert.deepStrictEqual(again, Option.some(o))
    }))

  it.effect("the data folder is 0700 and the database files 0600, a looser existing folder and file tightened (issue #28)", () =>
    Effect.gen(function*() {
      const mode = (p: string) => fs.statSync(p).mode & 0o777
      const fresh = path.join(dir, "modes", "fresh")
      const o = { id: "org-modes", name: "Modes", plan: "sandbox" as const, created_at: 1_767_225_600_000 }
      const write = (dataDir: string) =>
        Effect.flatMap(Accounts, (accounts) => accounts.insertOrganisation(o)).pipe(
          Effect.provide(Database.layer),
          withEnv({ TRACEBRIDGE_DATA_DIR: dataDir })
        )
      yield* write(fresh)
      assert.strictEqual(mode(fresh).toString(8), "700")
      const files = fs.readdirSync(fresh).filter((f) => f.startsWith(Database.sqliteFileName))
      assert.include(files, Database.sqliteFileName)
      for (const f of files) assert.strictEqual(mode(path.join(fresh, f)).toString(8), "600", f)
      // a folder and a database made before (0755 and 0644) are tightened at the next start
      const old = path.join(dir, "modes", "old")
      fs.mkdirSync(old, { recursive: true, mode: 0o755 })
      fs.chmodSync(old, 0o755)
      fs.copyFileSync(path.join(fresh, Database.sqliteFileName), path.join(old, Database.sqliteFileName))
      fs.chmodSync(path.join(old, Database.sqliteFileName), 0o644)
      yield* Effect.flatMap(Accounts, (accounts) => accounts.getOrganisation(o.id)).pipe(
        Effect.provide(Database.layer),
        withEnv({ TRACEBRIDGE_DATA_DIR: old })
      )
      assert.strictEqual(mode(old).toString(8), "700")
      for (const f of fs.readdirSync(old).filter((f) => f.startsWith(Database.sqliteFileName))) {
        assert.strictEqual(mode(path.join(old, f)).toString(8), "600", f)
      }
      // a shared, sticky folder (like /tmp) is left as it is: only the files are ours
      const shared = path.join(dir, "modes", "shared")
      fs.mkdirSync(shared, { recursive: true })
      fs.chmodSync(shared, 0o1777)
      yield* write(shared)
      assert.strictEqual((fs.statSync(shared).mode & 0o7777).toString(8), "1777")
      assert.strictEqual(mode(path.join(shared, Database.sqliteFileName)).toString(8), "600")
    }))

  it.effect("layerSqlite(\":memory:\") is a private, migrated database that survives transactions", () =>
    Effect.gen(function*() {
      const o = { id: "org-mem", name: "Mem", plan: "production" as const, created_at: 1 }
      const got = yield* Effect.gen(function*() {
        const accounts = yield* Accounts
        const transactions = yield* Transactions
        yield* transactions.transaction(accounts.insertOrganisation(o))
        yield* transactions.transaction(accounts.setPlan(o.id, "sandbox"))
        return yield* accounts.getOrganisation(o.id)
      }).pipe(Effect.provide(Database.layerSqlite(":memory:")))
      assert.deepStrictEqual(got, Option.some({ ...o, plan: "sandbox" as const }))
    }))
})

describe("indexes", () => {
  // The dashboard Overview reads one organisation's webhook backlog on every load
  // (`MetricsStore.organisationSnapshot`): from an index, not by scanning every organisation's
  // deliveries.
  it.effect("an organisation's delivery backlog is read from an index", () => {
    const file = path.join(dir, "indexes.db")
    return Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const plan = yield* sql<{ readonly detail: string }>`EXPLAIN QUERY PLAN
        SELECT status, COUNT(*) AS n, MIN(created_at) AS oldest FROM webhook_deliveries
        WHERE organisation_id = ${"org_x"} GROUP BY status`
      const details = plan.map((row) => row.detail).join("; ")
      assert.match(details, /USING (COVERING )?INDEX webhook_deliveries_organisation/, details)
    }).pipe(
      Effect.provide(LibsqlClient.layer({ url: `file:${file}` })),
      (explain) => Effect.zipRight(Layer.build(Database.layerSqlite(file)).pipe(Effect.scoped), explain)
    )
  })
})
