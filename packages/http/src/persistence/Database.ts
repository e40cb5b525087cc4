/**
 * Where the stores live, chosen from Config:
 *
 * - `DATABASE_URL` set (`postgres://…` / `postgresql://…`): Postgres through `@effect/sql-pg`;
 * - otherwise the embedded default: SQLite through libsql, in `tracebridge.db` under
 *   `TRACEBRIDGE_DATA_DIR` (default `./.tracebridge`, created when missing).
 *
 * Every layer here runs the migrations (`migrations.ts`) before it provides the stores
 * (`Persistence`: one tag per concept, each with its SQL in its own module, the same on both
 * backends). The URL is read as a `Redacted` and never logged: it may hold a password.
 *
 * @since 0.1.0
 */
import { NodeContext } from "@effect/platform-node"
import type { Migrator } from "@effect/sql"
import { SqlClient, SqlError } from "@effect/sql"
import { LibsqlClient, LibsqlMigrator } from "@effect/sql-libsql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import type { Client as SdkClient, Transaction as SdkTransaction, TransactionMode } from "@libsql/client"
import { createClient } from "@libsql/client"
import { SyncStore } from "@tracebridge/sync"
import { Config, ConfigError, Context, Effect, Either, Layer, Redacted } from "effect"
import NativeDatabase from "libsql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Accounts from "./Accounts.js"
import * as Ciphertexts from "./Ciphertexts.js"
import * as ConnectionStore from "./ConnectionStore.js"
import * as IdempotencyStore from "./IdempotencyStore.js"
import * as LinkTokens from "./LinkTokens.js"
import { loader } from "./migrations.js"
import * as RateBuckets from "./RateBuckets.js"
import * as RowCache from "./RowCache.js"
import * as SandboxLog from "./SandboxLog.js"
import * as Tokens from "./Tokens.js"
import * as Transactions from "./Transactions.js"
import * as UpstreamBuckets from "./UpstreamBuckets.js"
import * as WebhookStore from "./WebhookStore.js"

/**
 * Every store the database layers provide: one tag per concept.
 *
 * @since 0.1.0
 * @category models
 */
export type Persistence =
  | Accounts.Accounts
  | Tokens.Tokens
  | LinkTokens.LinkTokens
  | ConnectionStore.ConnectionStore
  | SandboxLog.SandboxLog
  | WebhookStore.WebhookStore
  | Ciphertexts.Ciphertexts
  | IdempotencyStore.IdempotencyStore
  | RateBuckets.RateBuckets
  | UpstreamBuckets.UpstreamBuckets
  | SyncStore.SyncStore
  | Transactions.Transactions

/** The stores with a read that `RowCache` keeps on SQLite. */
const cacheableStores = Layer.mergeAll(Accounts.layer, Tokens.layer, ConnectionStore.layer)

/** The other stores, and the transactions. */
const otherStores = Layer.mergeAll(
  LinkTokens.layer,
  SandboxLog.layer,
  WebhookStore.layer,
  Ciphertexts.layer,
  IdempotencyStore.layer,
  RateBuckets.layer,
  UpstreamBuckets.layer,
  SyncStore.layer,
  Transactions.layer
)

/**
 * Every store over the `SqlClient` in context, with no cache (run the migrations first: the
 * layers below do).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql: Layer.Layer<Persistence, never, SqlClient.SqlClient> = Layer.merge(
  cacheableStores,
  otherStores
)

/** `layerSql` with the token, organisation and connection reads behind `RowCache`. */
const layerSqlCached = (dataVersion: () => number): Layer.Layer<Persistence, never, SqlClient.SqlClient> =>
  Layer.merge(
    Layer.effectContext(Effect.gen(function*() {
      const { accounts, connections, tokens } = RowCache.wrap({
        accounts: yield* Accounts.Accounts,
        tokens: yield* Tokens.Tokens,
        connections: yield* ConnectionStore.ConnectionStore
      }, dataVersion)
      return Context.make(Accounts.Accounts, accounts).pipe(
        Context.add(Tokens.Tokens, tokens),
        Context.add(ConnectionStore.ConnectionStore, connections)
      )
    })).pipe(Layer.provide(cacheableStores)),
    otherStores
  )

/**
 * What building a database layer can fail with: a bad configuration, an unreachable database,
 * or a migration that did not apply.
 *
 * @since 0.1.0
 * @category models
 */
export type DatabaseError = ConfigError.ConfigError | SqlError.SqlError | Migrator.MigrationError

/** The file name of the embedded database inside the data folder. @since 0.1.0 @category constants */
export const sqliteFileName = "tracebridge.db"

/** `chmod` to at most `allowed`: bits beyond it are taken away, none added. */
const tighten = (target: string, allowed: number) => {
  const mode = fs.statSync(target).mode & 0o777
  if ((mode & ~allowed) !== 0) fs.chmodSync(target, mode & allowed)
}

/**
 * The database file's URL, with its folder made (0700) and the file made empty (0600) when
 * missing, so that SQLite's `-wal` and `-shm` files, which take the database file's mode, are 0600
 * too; a folder or files made looser before (0755, 0644) are tightened (issue #28: the folder holds
 * licence numbers and sealed logins).
 */
const sqliteFile = (file: string) =>
  Effect.try({
    try: () => {
      const absolute = path.resolve(file)
      const folder = path.dirname(absolute)
      fs.mkdirSync(folder, { recursive: true, mode: 0o700 })
      tighten(folder, 0o700)
      fs.closeSync(fs.openSync(absolute, "a", 0o600))
      for (const suffix of ["", "-wal", "-shm"]) {
        if (fs.existsSync(`${absolute}${suffix}`)) tighten(`${absolute}${suffix}`, 0o600)
      }
      return pathToFileURL(absolute).href
    },
    catch: (cause) => new SqlError.SqlError({ cause, message: "Could not create the folder of the SQLite database" })
  })

/** A fresh temporary database file, deleted with the layer's scope. */
const temporaryFile = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-db-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => path.join(dir, sqliteFileName)))

/**
 * SQLite's own wait for another connection's lock, per statement (`PRAGMA busy_timeout`). The
 * binding waits on the calling thread, so the whole process stops meanwhile: it stays short, and
 * longer waits are `retryBusy`'s, which sleep without blocking.
 */
const busyTimeout = "PRAGMA busy_timeout = 50"

/** How long a statement or the start of a transaction waits, in all, for another process's lock (ms). */
const BUSY_WAIT_MS = 5_000

/** SQLite's "another connection has the lock" (`SQLITE_BUSY`, `SQLITE_LOCKED` and their extended codes). */
const isBusy = (error: unknown): boolean => {
  for (let e = error, depth = 0; typeof e === "object" && e !== null && depth < 5; depth++) {
    const { cause, code } = e as { readonly code?: unknown; readonly cause?: unknown }
    if (typeof code === "string" && /^SQLITE_(BUSY|LOCKED)/.test(code)) return true
    e = cause
  }
  return false
}

/**
 * Runs `run` again while it fails busy, after 10, 20, 40 … up to 250 ms (sleeping, so the process
 * goes on), for at most `BUSY_WAIT_MS` in all; `reopen` first replaces the connection (libsql
 * leaves a statement that failed busy in progress, and later `COMMIT`s on that connection fail).
 * Then the busy error, which the caller sees as any failure of the database.
 */
const retryBusy = async <A>(run: () => Promise<A>, reopen: () => void): Promise<A> => {
  const started = Date.now()
  for (let delay = 10;; delay = Math.min(delay * 2, 250)) {
    try {
      return await run()
    } catch (error) {
      if (!isBusy(error)) throw error
      reopen()
      if (Date.now() - started + delay > BUSY_WAIT_MS) throw error
      await new Promise((resolve) => setTimeout(resolve, delay))
    }
  }
}

const begin = (mode: TransactionMode) =>
  mode === "read" ? "BEGIN TRANSACTION READONLY" : mode === "deferred" ? "BEGIN DEFERRED" : "BEGIN IMMEDIATE"

/** A transaction that never began: every statement and the commit fail with `error`; the rollback does nothing. */
const failedTransaction = (error: unknown): SdkTransaction => ({
  execute: () => Promise.reject(error),
  batch: () => Promise.reject(error),
  executeMultiple: () => Promise.reject(error),
  commit: () => Promise.reject(error),
  rollback: () => Promise.resolve(),
  close: () => {},
  closed: false
})

/**
 * The libsql client with its connections kept: one for single statements and one for transactions
 * (`LibsqlClient` runs one transaction at a time, and no single statement during one). The stock
 * client hands its connection to each transaction and opens a new one for the next statement,
 * which reads the whole schema again before its first statement: about a millisecond per
 * transaction, and the abandoned connections wait for the garbage collector. As before, a
 * transaction runs on a connection of its own.
 */
const keptConnections = (url: string) =>
  Effect.acquireRelease(
    Effect.sync((): SdkClient => {
      // Another process's write (the operator CLI beside the server, another node on the file) is
      // waited for, up to `BUSY_WAIT_MS`, instead of failing at once with SQLITE_BUSY (issue #28:
      // `npm run admin` against a running server). The client's `execute` runs the statement before
      // it returns its promise, so a connection has it before its first statement.
      const connect = () => {
        const client = createClient({ url })
        void client.execute(busyTimeout)
        return client
      }
      let single = connect()
      let txs = connect()
      const reopenSingle = () => {
        single.close()
        single = connect()
      }
      const reopenTxs = () => {
        txs.close()
        txs = connect()
      }
      let open = false
      const end = (statement: "COMMIT" | "ROLLBACK") =>
        txs.execute(statement).then(
          () => {
            open = false
          },
          (error) => {
            // SQLite may have rolled back already (some errors end the transaction).
            if (statement === "ROLLBACK") open = false
            else throw error
          }
        )
      const transaction: SdkTransaction = {
        execute: (stmt) => txs.execute(stmt),
        batch: async (stmts) => {
          const results = []
          for (const stmt of stmts) results.push(await txs.execute(stmt))
          return results
        },
        executeMultiple: (sql) => txs.executeMultiple(sql),
        commit: () => end("COMMIT"),
        rollback: () => open ? end("ROLLBACK") : Promise.resolve(),
        close: () => {
          if (open) void end("ROLLBACK")
        },
        get closed() {
          return !open
        }
      }
      return {
        execute: (stmt) => retryBusy(() => single.execute(stmt), reopenSingle),
        batch: (stmts, mode) => retryBusy(() => single.batch(stmts, mode), reopenSingle),
        migrate: (stmts) => single.migrate(stmts),
        transaction: async (mode: TransactionMode = "write") => {
          if (open) throw new SqlError.SqlError({ cause: null, message: "A transaction is already open" })
          try {
            await retryBusy(() => txs.execute(begin(mode)), reopenTxs)
          } catch (error) {
            // Issue #28: the stock client took its one permit before asking for the transaction,
            // and gives it back only when the transaction ends; a failure here kept it for good and
            // every later statement waited forever. So a BEGIN that failed hands back a
            // transaction whose every statement fails with its error: the caller's transaction
            // fails, rolls back (nothing to do) and ends, and the permit is given back.
            return failedTransaction(error)
          }
          open = true
          return transaction
        },
        executeMultiple: (sql) => retryBusy(() => single.executeMultiple(sql), reopenSingle),
        sync: () => single.sync(),
        close: () => {
          single.close()
          txs.close()
        },
        get closed() {
          return single.closed
        },
        protocol: single.protocol
      }
    }),
    (client) => Effect.sync(() => client.close())
  )

/**
 * `PRAGMA data_version` on a connection of its own, prepared once: it changes whenever another
 * connection commits (`RowCache`'s check, a few microseconds, synchronous).
 */
const changeCounter = (url: string) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => new NativeDatabase(fileURLToPath(url))),
      (db) => Effect.sync(() => db.close())
    ),
    (db) => {
      const statement = db.prepare("PRAGMA data_version").raw(true)
      return () => {
        const row = statement.get()
        // NaN never equals the last version: an unreadable counter empties the cache
        return Array.isArray(row) ? Number(row[0]) : Number.NaN
      }
    }
  )

/**
 * The embedded database in write-ahead-log mode (`PRAGMA journal_mode = WAL`, kept in the file, so
 * every later connection uses it too), with `synchronous` left at `FULL`: a commit is still on disk
 * before it returns (one fsync of the log, where the default rollback journal takes several and
 * rewrites the database file each time, about ten times the cost per commit), and readers do not
 * wait for a writer. The log sits beside the file (`tracebridge.db-wal`, `-shm`) and is folded back
 * into it at checkpoints; copy the three together, or use `VACUUM INTO` for a backup.
 */
const writeAheadLog = Layer.effectDiscard(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe("PRAGMA journal_mode = WAL")
  })
)

/**
 * The stores on SQLite (libsql) in the file `file` (its folder is created), migrated, with the
 * auth rows (`Tokens.getToken`, `Accounts.getOrganisation`, `ConnectionStore.getConnection`) kept
 * by `RowCache` (checked against `PRAGMA data_version` on every read).
 *
 * `":memory:"` gives a private database in a temporary file removed when the layer is released:
 * libsql's own `:memory:` mode opens a fresh, empty database after every transaction, so it
 * cannot hold a migrated schema.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSqlite = (file: string): Layer.Layer<Persistence, DatabaseError> =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const url = yield* sqliteFile(file === ":memory:" ? yield* temporaryFile : file)
      const liveClient = yield* keptConnections(url)
      const dataVersion = yield* changeCounter(url)
      return layerSqlCached(dataVersion).pipe(
        Layer.provide(LibsqlMigrator.layer({ loader })),
        Layer.provide(writeAheadLog),
        Layer.provide(LibsqlClient.layer({ liveClient }))
      )
    })
  )

/** An arbitrary, fixed key for the advisory lock that serialises migrations across processes. */
const migrationLock = 7_401_726_311

/**
 * The Postgres migrations, one process at a time. On a fresh database the Migrator's own check
 * for its table races (two processes starting together: one fails creating it), so the run is
 * held under a session advisory lock taken on a connection reserved for it, released after.
 */
const pgMigrations = Layer.effectDiscard(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const connection = yield* sql.reserve
    yield* Effect.acquireRelease(
      connection.executeRaw(`SELECT pg_advisory_lock(${migrationLock})`, []),
      () => Effect.ignore(connection.executeRaw(`SELECT pg_advisory_unlock(${migrationLock})`, []))
    )
    yield* PgMigrator.run({ loader })
  }).pipe(Effect.scoped)
).pipe(Layer.provide(NodeContext.layer))

/**
 * The stores on Postgres at `url` (`postgres://user:password@host:port/database`), migrated
 * (no cache).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPg = (url: Redacted.Redacted | string): Layer.Layer<Persistence, DatabaseError> =>
  layerSql.pipe(
    Layer.provide(pgMigrations),
    Layer.provide(PgClient.layer({ url: Redacted.isRedacted(url) ? url : Redacted.make(url) }))
  )

/**
 * Which backend the configuration selects.
 *
 * @since 0.1.0
 * @category models
 */
export type Backend =
  | { readonly _tag: "Pg"; readonly url: Redacted.Redacted }
  | { readonly _tag: "Sqlite"; readonly file: string }

/**
 * Reads `DATABASE_URL` (optional; empty counts as unset) and `TRACEBRIDGE_DATA_DIR` (default
 * `./.tracebridge`).
 *
 * @since 0.1.0
 * @category config
 */
export const backend: Config.Config<Backend> = Config.all({
  url: Config.option(Config.redacted("DATABASE_URL")),
  dataDir: Config.string("TRACEBRIDGE_DATA_DIR").pipe(Config.withDefault("./.tracebridge"))
}).pipe(
  Config.mapOrFail(({ dataDir, url }): Either.Either<Backend, ConfigError.ConfigError> => {
    const value = url._tag === "Some" ? Redacted.value(url.value).trim() : ""
    if (url._tag === "None" || value === "") {
      return Either.right({ _tag: "Sqlite", file: path.join(dataDir, sqliteFileName) })
    }
    if (!/^postgres(ql)?:\/\//i.test(value)) {
      // The message names the expected form only: the value may hold a password.
      return Either.left(ConfigError.InvalidData(["DATABASE_URL"], "must be a postgres:// or postgresql:// URL"))
    }
    return Either.right({ _tag: "Pg", url: url.value })
  })
)

/**
 * The stores as the configuration selects (see `backend`), migrated at start.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Persistence, DatabaseError> = Layer.unwrapEffect(
  Effect.map(backend, (b) => b._tag === "Pg" ? layerPg(b.url) : layerSqlite(b.file))
)
