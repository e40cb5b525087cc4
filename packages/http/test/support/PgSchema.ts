/**
 * The Postgres test database (`TEST_DATABASE_URL`), and a fresh schema in it per test: created,
 * dropped with the test's scope, and reached through a URL whose connections see only it.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { randomUUID } from "node:crypto"

/** The database URL, or a clear failure naming the file that needs it. */
export const testDatabaseUrl = (file: string): string => {
  const url = process.env.TEST_DATABASE_URL
  if (url === undefined || url === "") {
    throw new Error(`${file} needs TEST_DATABASE_URL (postgres://user:password@host:5432/database)`)
  }
  return url
}

/** A fresh schema named `{prefix}_{uuid}`; the URL of a connection that sees only it. */
export const freshSchema = (url: string, prefix: string) =>
  Effect.gen(function*() {
    const schema = `${prefix}_${randomUUID().replaceAll("-", "")}`
    const admin = PgClient.layer({ url: Redacted.make(url) })
    const ddl = (statement: string) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(Effect.provide(admin))
    yield* ddl(`CREATE SCHEMA ${schema}`)
    yield* Effect.addFinalizer(() => Effect.orDie(ddl(`DROP SCHEMA ${schema} CASCADE`)))
    const scoped = new URL(url)
    scoped.searchParams.set("options", `-c search_path=${schema}`)
    return scoped.href
  })
