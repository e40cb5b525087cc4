/**
 * The embedded SQLite's client (`persistence/internal/sqlite.ts`): its one permit (a transaction,
 * or a single statement, at a time) is never lost when a statement's wait for it ends just as it
 * comes free. Lost, every later statement of the process would wait out its `wait` and answer 503
 * for ever (seen in CI: the request log's writer timed out on the permit at the moment a health
 * probe gave it back, and the server never recovered).
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Either, Fiber } from "effect"
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
