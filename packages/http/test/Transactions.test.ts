/**
 * The embedded SQLite under another writer (issue #28, "the database never wedges"): a second
 * connection to the same file (the operator CLI, in production) holds the write lock while the
 * service's stores run.
 *
 * - A transaction whose `BEGIN` fails with `SQLITE_BUSY` gives its connection (the one permit)
 *   back: the next transaction runs once the lock is free, instead of waiting forever.
 * - A lock held for a moment is waited out (a busy timeout, then bounded retries with backoff);
 *   a lock held past the wait fails as "unavailable", which the API answers 503.
 * - A statement that failed busy does not poison its connection (libsql leaves it in progress,
 *   and every later `COMMIT` on that connection would fail: tursodatabase/libsql-client-ts#352).
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Exit, Layer } from "effect"
import NativeDatabase from "libsql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import { Accounts } from "../src/persistence/Accounts.js"
import * as Database from "../src/persistence/Database.js"
import { Transactions } from "../src/persistence/Transactions.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-transactions-test-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** The stores on a fresh file, waiting at most 600 ms for the database. */
const stores = (name: string) => {
  const file = path.join(dir, name, Database.sqliteFileName)
  const layer = Database.layerSqlite(file).pipe(
    Layer.orDie,
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ TRACEBRIDGE_DATABASE_WAIT_MS: "600" })))
  )
  return { file, layer }
}

/** Another connection to `file` holding its write lock until `release` is called. */
const holdWriteLock = (file: string) => {
  const other = new NativeDatabase(file)
  other.exec("BEGIN IMMEDIATE")
  return {
    release: () => {
      other.exec("ROLLBACK")
      other.close()
    }
  }
}

const organisation = (id: string) => ({ id, name: id, plan: "sandbox" as const, created_at: 1_767_225_600_000 })

/** At most `ms`, else a failure naming `what` (a hang is the bug). */
const within = (ms: number, what: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(effect, { duration: Duration.millis(ms), onTimeout: () => new Error(`${what}: hung`) })

describe("Transactions on SQLite with another writer", () => {
  it.live("a BEGIN that fails busy gives the connection back: the next transaction runs once the lock is free", () => {
    const { file, layer } = stores("begin")
    return Effect.gen(function*() {
      const accounts = yield* Accounts
      const transactions = yield* Transactions
      yield* accounts.insertOrganisation(organisation("org-busy"))
      const lock = holdWriteLock(file)
      const busy = yield* transactions.transaction(accounts.setPlan("org-busy", "production")).pipe(
        Effect.exit,
        within(5_000, "a transaction while another connection writes")
      )
      lock.release()
      assert.isTrue(Exit.isFailure(busy), "the write cannot run while the lock is held")
      if (Exit.isFailure(busy)) assert.isTrue(Database.isUnavailable(busy.cause), "it fails as unavailable (503)")
      // The permit came back, and the connection is not poisoned by the failed BEGIN.
      for (let i = 0; i < 3; i++) {
        const changed = yield* transactions.transaction(accounts.setPlan("org-busy", i % 2 ? "sandbox" : "production"))
          .pipe(within(3_000, `transaction ${i} after the lock was released`))
        assert.isTrue(changed)
      }
      const plain = yield* accounts.setPlan("org-busy", "production").pipe(within(3_000, "a single statement"))
      assert.isTrue(plain)
    }).pipe(Effect.provide(layer))
  })

  it.live("a lock held for a moment is waited out, with a busy timeout and retries", () => {
    const { file, layer } = stores("wait")
    return Effect.gen(function*() {
      const accounts = yield* Accounts
      const transactions = yield* Transactions
      yield* accounts.insertOrganisation(organisation("org-wait"))
      const lock = holdWriteLock(file)
      setTimeout(() => lock.release(), 200)
      const changed = yield* transactions.transaction(accounts.setPlan("org-wait", "production")).pipe(
        within(5_000, "a transaction waiting for the lock")
      )
      assert.isTrue(changed)
      const lock2 = holdWriteLock(file)
      setTimeout(() => lock2.release(), 200)
      const single = yield* accounts.setPlan("org-wait", "sandbox").pipe(within(5_000, "a statement waiting"))
      assert.isTrue(single)
    }).pipe(Effect.provide(layer))
  })

  it.live("a single statement that fails busy does not poison its connection", () => {
    const { file, layer } = stores("single")
    return Effect.gen(function*() {
      const accounts = yield* Accounts
      yield* accounts.insertOrganisation(organisation("org-single"))
      const lock = holdWriteLock(file)
      const busy = yield* Effect.exit(accounts.setPlan("org-single", "production")).pipe(
        within(5_000, "a statement while another connection writes")
      )
      lock.release()
      assert.isTrue(Exit.isFailure(busy))
      for (let i = 0; i < 3; i++) {
        assert.isTrue(yield* accounts.setPlan("org-single", i % 2 ? "sandbox" : "production").pipe(within(3_000, "x")))
      }
      // Another connection can write too: nothing kept the lock.
      const other = new NativeDatabase(file)
      other.exec("BEGIN IMMEDIATE")
      other.exec("COMMIT")
      other.close()
    }).pipe(Effect.provide(layer))
  })
})
