/**
 * The stores' suite (`PersistenceSuite.ts`) against Postgres at `TEST_DATABASE_URL`
 * (`postgres://user:password@host:5432/database`). Not part of `npm test`: run it with
 * `npm run test:pg` (`.ci/run` starts a Postgres for it).
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { Accounts } from "../src/persistence/Accounts.js"
import * as Database from "../src/persistence/Database.js"
import { persistenceSuite } from "./PersistenceSuite.js"
import { freshSchema } from "./support/PgSchema.js"

const url = process.env.TEST_DATABASE_URL
if (url === undefined || url === "") {
  throw new Error("Persistence.pg.test.ts needs TEST_DATABASE_URL (postgres://user:password@host:5432/database)")
}

persistenceSuite("Persistence (Postgres)", Database.layerPg(Redacted.make(url)), {
  rollback: true,
  // a fresh schema of its own, dropped after the test
  isolated: Layer.unwrapScoped(
    Effect.map(freshSchema(url, "persistence"), (scoped) => Database.layerPg(Redacted.make(scoped)))
  )
})

describe("Database (Postgres)", () => {
  it.effect("layer picks Postgres from DATABASE_URL, and migrating again is a no-op", () =>
    Effect.gen(function*() {
      const env = Effect.withConfigProvider(ConfigProvider.fromJson({ DATABASE_URL: url }))
      const o = { id: `org-${randomUUID()}`, name: "Pg", plan: "sandbox" as const, created_at: 1_767_225_600_000 }
      yield* Effect.flatMap(Accounts, (accounts) => accounts.insertOrganisation(o)).pipe(
        Effect.provide(Database.layer),
        env
      )
      const again = yield* Effect.flatMap(Accounts, (accounts) => accounts.getOrganisation(o.id)).pipe(
        Effect.provide(Database.layer),
        env
      )
      assert.deepStrictEqual(again, Option.some(o))
    }))

  it.live("processes starting together on a fresh database all migrate it (one at a time)", () =>
    Effect.gen(function*() {
      // A fresh schema stands in for a fresh database: the connections below see only it.
      const schema = `migrate_${randomUUID().replaceAll("-", "")}`
      const admin = PgClient.layer({ url: Redacted.make(url) })
      const ddl = (statement: string) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(Effect.provide(admin))
      yield* ddl(`CREATE SCHEMA ${schema}`)
      const scoped = new URL(url)
      scoped.searchParams.set("options", `-c search_path=${schema}`)
      const start = Effect.either(Effect.scoped(Effect.provide(Accounts, Database.layerPg(scoped.href))))
      const results = yield* Effect.all(Array.from({ length: 6 }, () => start), { concurrency: "unbounded" }).pipe(
        Effect.ensuring(Effect.orDie(ddl(`DROP SCHEMA ${schema} CASCADE`)))
      )
      assert.deepStrictEqual(
        results.map((r) => Either.isRight(r) ? "ok" : String(r.left)),
        Array.from({ length: 6 }, () => "ok")
      )
    }))

  it.effect("the rate buckets and poll claims are unlogged: a request's bucket write waits for no WAL flush (issue #35)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ relname: string; relpersistence: string }>`
        SELECT c.relname, c.relpersistence FROM pg_class c
        WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
          AND c.relname IN ('rate_limit_buckets', 'upstream_rate_buckets', 'poll_claims', 'request_log', 'tokens')`
      const persistence = Object.fromEntries(rows.map((r) => [r.relname, r.relpersistence]))
      assert.deepStrictEqual(persistence, {
        rate_limit_buckets: "u",
        upstream_rate_buckets: "u",
        poll_claims: "u",
        // what must survive a crash stays logged
        request_log: "p",
        tokens: "p"
      })
    }).pipe(
      Effect.provide(Layer.unwrapScoped(
        Effect.map(freshSchema(url, "unlogged"), (scoped) =>
          // migrated by the stores' layer, then read with a client of its own
          Layer.merge(
            Layer.discard(Database.layerPg(Redacted.make(scoped))),
            PgClient.layer({ url: Redacted.make(scoped) })
          ))
      ))
    ))
})
