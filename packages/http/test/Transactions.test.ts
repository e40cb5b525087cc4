/**
 * The embedded SQLite beside another writer (issue #28, "the database never wedges"): another
 * connection to the same file (the operator CLI, in production) holds the write lock while the
 * service's stores run. A transaction whose `BEGIN` fails busy fails, gives its connection (the
 * one permit of the stock `LibsqlClient`) back, and leaves it usable: the next transactions and
 * single statements run once the lock is free, instead of waiting forever.
 */
import { assert, describe, it } from "@effect/vitest"
import { Accounts } from "@tracebridge/http/persistence/Accounts"
import * as Database from "@tracebridge/http/persistence/Database"
import { Transactions } from "@tracebridge/http/persistence/Transactions"
import { Duration, Effect, Exit, Layer } from "effect"
import NativeDatabase from "libsql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-transactions-test-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const file = path.join(dir, Database.sqliteFileName)
const layer = Layer.orDie(Database.layerSqlite(file))

/** Another connection to `file` holding its write lock until `release`. */
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

/** At most `ms`, else a failure naming `what` (a hang is the bug). */
const within = (ms: number, what: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(effect, { duration: Duration.millis(ms), onTimeout: () => new Error(`${what}: hung`) })

describe.sequential("Transactions on SQLite beside another writer", () => {
  it.live(
    "a BEGIN that fails busy gives the connection back: later transactions and statements run",
    () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const transactions = yield* Transactions
        yield* accounts.insertOrganisation({
          id: "org-busy",
          name: "Busy",
          plan: "sandbox",
          created_at: 1_767_225_600_000
        })
        const lock = holdWriteLock()
        const busy = yield* transactions.transaction(accounts.setPlan("org-busy", "production")).pipe(
          Effect.exit,
          within(15_000, "a transaction while another connection holds the lock")
        )
        lock.release()
        assert.isTrue(Exit.isFailure(busy), "the write cannot run while the lock is held")
        for (let i = 0; i < 3; i++) {
          const changed = yield* transactions.transaction(
            accounts.setPlan("org-busy", i % 2 ? "sandbox" : "production")
          )
            .pipe(within(5_000, `transaction ${i} after the lock was released`))
          assert.isTrue(changed)
        }
        assert.isTrue(yield* accounts.setPlan("org-busy", "production").pipe(within(5_000, "a single statement")))
      }).pipe(Effect.provide(layer)),
    60_000
  )

  it.live("a lock held for a moment is waited out", () =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const transactions = yield* Transactions
      yield* accounts.insertOrganisation({
        id: "org-wait",
        name: "Wait",
        plan: "sandbox",
        created_at: 1_767_225_600_000
      })
      const lock = holdWriteLock()
      setTimeout(() => lock.release(), 300)
      const changed = yield* transactions.transaction(accounts.setPlan("org-wait", "production")).pipe(
        within(10_000, "a transaction waiting for the lock")
      )
      assert.isTrue(changed)
    }).pipe(Effect.provide(layer)), 60_000)
})
