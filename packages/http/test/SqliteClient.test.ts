/**
 * The embedded SQLite's client (`persistence/internal/sqlite.ts`):
 *
 * - its one permit (a transaction, or a single statement, at a time) is never lost when a
 *   statement's wait for it ends just as it comes free. Lost, every later statement of the process
 *   would wait out its `wait` and answer 503 for ever (seen in CI: the request log's writer timed
 *   out on the permit at the moment a health probe gave it back, and the server never recovered);
 * - a statement's text is prepared once per connection and kept (issue #35), and parameters and
 *   rows are what `@libsql/client` made of them.
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Either, Fiber } from "effect"
import NativeDatabase from "libsql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import * as Sqlite from "../src/persistence/internal/sqlite.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-sqlite-client-test-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const ROUNDS = 150

const busyFor = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // the event loop is held, as a long synchronous turn of a loaded server holds it
  }
}

describe("the SQLite client's permit", () => {
  it.live(
    "a statement whose wait ends as a transaction gives the permit back never keeps it",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE t (n INTEGER)`
        let ran = 0
        let refused = 0
        for (let i = 0; i < ROUNDS; i++) {
          // a transaction holds the permit for about the statement's wait, then gives it back
          const hold = 10 + (i % 5)
          const tx = yield* Effect.fork(sql.withTransaction(Effect.zipRight(
            sql`INSERT INTO t VALUES (${i})`,
            Effect.sleep(Duration.millis(hold))
          )))
          yield* Effect.sleep(Duration.millis(1))
          const statement = yield* Effect.fork(Effect.either(sql`SELECT count(*) AS n FROM t`))
          // the loop is held past both the hold and the wait: the give-back and the deadline land together
          yield* Effect.sleep(Duration.millis(hold - 2))
          busyFor(i % 4 === 0 ? 0 : i % 4 === 1 ? 1 + (i % 9) : i % 4 === 2 ? 12 : 25)
          yield* Fiber.join(tx)
          const outcome = yield* Fiber.join(statement)
          if (Either.isRight(outcome)) ran++
          else refused++
          // whatever the outcome, the permit is free again: the next statement runs at once
          const next = yield* Effect.either(sql`SELECT count(*) AS n FROM t`)
          assert.isTrue(Either.isRight(next), `round ${i}: the permit was lost (${ran} ran, ${refused} refused)`)
        }
        assert.strictEqual(ran + refused, ROUNDS)
      }).pipe(
        Effect.provide(Sqlite.layer({
          url: `file:${path.join(dir, "permit.sqlite")}`,
          busyTimeout: Duration.millis(5),
          wait: Duration.millis(12)
        }))
      ),
    60_000
  )
})

const layerAt = (name: string) =>
  Sqlite.layer({ url: `file:${path.join(dir, name)}`, busyTimeout: Duration.millis(5), wait: Duration.millis(500) })

describe("the SQLite client's statements", () => {
  it.live("a statement's text is prepared once per connection, then kept", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE kept (n INTEGER, s TEXT)`
      const prepare = NativeDatabase.prototype.prepare
      const prepared: Array<string> = []
      NativeDatabase.prototype.prepare = function(this: InstanceType<typeof NativeDatabase>, source: string) {
        prepared.push(source)
        return prepare.call(this, source)
      } as typeof prepare
      try {
        for (let i = 0; i < 20; i++) yield* sql`INSERT INTO kept (n, s) VALUES (${i}, ${`row ${i}`})`
        for (let i = 0; i < 20; i++) {
          const rows = yield* sql<{ n: number; s: string }>`SELECT n, s FROM kept WHERE n = ${i}`
          assert.deepStrictEqual(rows, [{ n: i, s: `row ${i}` }])
        }
        // in a transaction too, on the other connection
        for (let i = 0; i < 5; i++) {
          yield* sql.withTransaction(sql`UPDATE kept SET s = ${"changed"} WHERE n = ${i}`)
        }
      } finally {
        NativeDatabase.prototype.prepare = prepare
      }
      const count = (text: string) => prepared.filter((p) => p === text).length
      assert.strictEqual(count("INSERT INTO kept (n, s) VALUES (?, ?)"), 1, prepared.join("\n"))
      assert.strictEqual(count("SELECT n, s FROM kept WHERE n = ?"), 1)
      assert.strictEqual(count("UPDATE kept SET s = ? WHERE n = ?"), 1)
    }).pipe(Effect.provide(layerAt("kept.sqlite"))))

  it.live("parameters bind as before: booleans as 1 and 0, dates as milliseconds, bytes, bigints; undefined is refused", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE params (b INTEGER, d INTEGER, x BLOB, n INTEGER, z TEXT)`
      const at = new Date("2026-11-30T00:00:00.000Z")
      yield* sql`INSERT INTO params VALUES (${true}, ${at}, ${new Uint8Array([1, 2, 3])}, ${2n ** 40n}, ${null})`
      yield* sql`INSERT INTO params VALUES (${false}, ${0}, ${null}, ${-1}, ${"text"})`
      const rows = yield* sql<
        Record<string, unknown>
      >`SELECT b, d, hex(x) AS x, n, z FROM params ORDER BY b DESC`
      assert.deepStrictEqual(rows, [
        { b: 1, d: at.valueOf(), x: "010203", n: 2 ** 40, z: null },
        { b: 0, d: 0, x: "", n: -1, z: "text" }
      ])
      const values = yield* sql`SELECT b, z FROM params ORDER BY b`.values
      assert.deepStrictEqual(values, [[0, "text"], [1, null]])
      const refused = yield* Effect.either(sql`INSERT INTO params (z) VALUES (${undefined as unknown as string})`)
      assert.isTrue(Either.isLeft(refused))
      assert.strictEqual(Either.isLeft(refused) && refused.left._tag, "SqlError")
      const infinite = yield* Effect.either(sql`INSERT INTO params (n) VALUES (${Number.POSITIVE_INFINITY})`)
      assert.isTrue(Either.isLeft(infinite))
    }).pipe(Effect.provide(layerAt("params.sqlite"))))

  it.live("a statement that failed stays usable, and holds no lock another connection waits for", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE once (v TEXT UNIQUE)`
      yield* sql`INSERT INTO once (v) VALUES (${"a"})`
      const duplicate = yield* Effect.either(sql`INSERT INTO once (v) VALUES (${"a"})`)
      assert.isTrue(Either.isLeft(duplicate))
      // another process's connection writes at once
      const other = new NativeDatabase(path.join(dir, "once.sqlite"))
      try {
        other.prepare("INSERT INTO once (v) VALUES (?)").run(["b"])
      } finally {
        other.close()
      }
      yield* sql`INSERT INTO once (v) VALUES (${"c"})`
      const rows = yield* sql<{ v: string }>`SELECT v FROM once ORDER BY v`
      assert.deepStrictEqual(rows.map((r) => r.v), ["a", "b", "c"])
    }).pipe(Effect.provide(layerAt("once.sqlite"))))
})
