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
import { LibsqlMigrator } from "@effect/sql-libsql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { SqlRow, SyncStore } from "@tracebridge/sync"
import { Cause, Config, ConfigError, Context, Duration, Effect, Either, Layer, Redacted } from "effect"
import NativeDatabase from "libsql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Accounts from "./Accounts.js"
import * as Ciphertexts from "./Ciphertexts.js"
import * as ConnectionStore from "./ConnectionStore.js"
import * as DashboardStore from "./DashboardStore.js"
import * as EventStore from "./EventStore.js"
import * as IdempotencyStore from "./IdempotencyStore.js"
import * as Sqlite from "./internal/sqlite.js"
import * as LinkTokens from "./LinkTokens.js"
import * as MetricsStore from "./MetricsStore.js"
import { loader } from "./migrations.js"
import * as MigrationState from "./MigrationState.js"
import * as RateBuckets from "./RateBuckets.js"
import * as RequestLogStore from "./RequestLogStore.js"
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
  | EventStore.EventStore
  | Ciphertexts.Ciphertexts
  | IdempotencyStore.IdempotencyStore
  | RateBuckets.RateBuckets
  | UpstreamBuckets.UpstreamBuckets
  | SyncStore.SyncStore
  | Transactions.Transactions
  | MigrationState.MigrationState
  | MetricsStore.MetricsStore
  | DashboardStore.DashboardStore
  | RequestLogStore.RequestLogStore

/** The stores with a read that `RowCache` keeps on SQLite. */
const cacheableStores = Layer.mergeAll(Accounts.layer, Tokens.layer, ConnectionStore.layer)

/** The other stores, and the transactions. */
const otherStores = Layer.mergeAll(
  LinkTokens.layer,
  SandboxLog.layer,
  WebhookStore.layer,
  EventStore.layer,
  Ciphertexts.layer,
  IdempotencyStore.layer,
  RateBuckets.layer,
  UpstreamBuckets.layer,
  SyncStore.layer,
  Transactions.layer,
  MigrationState.layer,
  MetricsStore.layer,
  DashboardStore.layer,
  RequestLogStore.layer
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

/**
 * `layerSql` with the token, organisation and connection reads behind `RowCache`, checked once per
 * request against `check` (SQLite's `PRAGMA data_version` on a connection of its own, or Postgres's
 * `row_generation`, migration `0020_row_generation`), and every write to the four cached tables
 * (through `Accounts`, `Tokens`, `ConnectionStore`, `SandboxLog`, `Ciphertexts`, and transactions
 * around them) making the request read it again, so that it sees its own writes.
 */
const layerSqlCached = (
  check: (sql: SqlClient.SqlClient) => Effect.Effect<unknown>
): Layer.Layer<Persistence, never, SqlClient.SqlClient> =>
  Layer.merge(
    Layer.effectContext(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { accounts, connections, tokens } = RowCache.wrapChecked({
        accounts: RowCache.forgetting(
          yield* Accounts.Accounts,
          ["getOrganisation", "getClient", "listOrganisations", "listClients"]
        ),
        tokens: RowCache.forgetting(yield* Tokens.Tokens, ["getToken"]),
        connections: RowCache.forgetting(
          yield* ConnectionStore.ConnectionStore,
          ["getConnection", "listConnections", "searchConnections"]
        )
      }, check(sql))
      return Context.make(Accounts.Accounts, accounts).pipe(
        Context.add(Tokens.Tokens, tokens),
        Context.add(ConnectionStore.ConnectionStore, connections),
        Context.add(SandboxLog.SandboxLog, RowCache.forgetting(yield* SandboxLog.SandboxLog, ["sandboxLog"])),
        Context.add(
          Ciphertexts.Ciphertexts,
          RowCache.forgetting(yield* Ciphertexts.Ciphertexts, ["listCiphertexts"])
        ),
        Context.add(Transactions.Transactions, RowCache.forgettingTransactions(yield* Transactions.Transactions))
      )
    })).pipe(Layer.provide(Layer.mergeAll(cacheableStores, SandboxLog.layer, Ciphertexts.layer, Transactions.layer))),
    otherStores
  )

/** The generation of `row_generation` on Postgres (ADR 0030). */
const pgGeneration = (sql: SqlClient.SqlClient): Effect.Effect<unknown> =>
  SqlRow.first(
    sql`SELECT generation FROM row_generation`,
    (row) => String((row as { readonly generation: unknown }).generation)
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
      // A shared folder (sticky, like /tmp) is not ours to tighten: the files in it are 0600.
      if ((fs.statSync(folder).mode & 0o1000) === 0) tighten(folder, 0o700)
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
 * How long the service waits for its database (issue #28, "the database never wedges"):
 *
 * - `TRACEBRIDGE_DATABASE_WAIT_MS` (default 5000, at least 50, at most 60000): the longest a
 *   statement or the start of a transaction waits for the database, retries included (SQLite:
 *   another connection's lock, or the transaction connection; Postgres: a pooled connection).
 *   Past it the statement fails as unavailable (`isUnavailable`), which the API answers 503
 *   `service_unavailable` with `Retry-After`.
 * - `TRACEBRIDGE_SQLITE_BUSY_TIMEOUT_MS` (default 100, at most 1000): SQLite's own wait for a lock
 *   on each statement (`PRAGMA busy_timeout`). It blocks the process (the binding is synchronous),
 *   so it stays short; longer waits are retries with backoff that do not block.
 *
 * @since 0.1.0
 * @category config
 */
export const waits: Config.Config<{ readonly wait: Duration.Duration; readonly busyTimeout: Duration.Duration }> =
  Config.all({
    wait: Config.integer("TRACEBRIDGE_DATABASE_WAIT_MS").pipe(
      Config.validate({
        message: "must be between 50 and 60000 (milliseconds)",
        validation: (n) => n >= 50 && n <= 60_000
      }),
      Config.withDefault(5_000),
      Config.map(Duration.millis)
    ),
    busyTimeout: Config.integer("TRACEBRIDGE_SQLITE_BUSY_TIMEOUT_MS").pipe(
      Config.validate({
        message: "must be between 0 and 1000 (milliseconds)",
        validation: (n) => n >= 0 && n <= 1_000
      }),
      Config.withDefault(100),
      Config.map(Duration.millis)
    )
  })

/** Postgres errors of a database that cannot be reached now (not of a statement). */
const pgUnavailableCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
  "55P03", // lock_not_available: a lock held past `lock_timeout`
  "08000", // connection_exception
  "08001",
  "08003",
  "08006"
])

const unavailableError = (error: unknown): boolean => {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === "object" && depth < 6; depth++) {
    if (Sqlite.isBusy(e)) return true
    const code = (e as { readonly code?: unknown }).code
    if (typeof code === "string" && pgUnavailableCodes.has(code)) return true
    const message = (e as { readonly message?: unknown }).message
    if (
      typeof message === "string" &&
      /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/i.test(message)
    ) return true
    e = (e as { readonly cause?: unknown }).cause
  }
  return false
}

/**
 * The database could not be had: SQLite busy or locked past `TRACEBRIDGE_DATABASE_WAIT_MS`, the
 * transaction connection still in use after it, or Postgres unreachable. Takes a defect or error
 * (the stores turn a `SqlError` into a defect) or a whole `Cause`. The API answers these 503
 * `service_unavailable` (`Http.ts`), never 500.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isUnavailable = (u: unknown): boolean =>
  Cause.isCause(u)
    ? [...Cause.failures(u), ...Cause.defects(u)].some(unavailableError)
    : unavailableError(u)

/**
 * The stores on SQLite (libsql) in the file `file` (its folder is created), migrated, with the
 * auth rows (`Tokens.getToken`, `Accounts.getOrganisation`, `ConnectionStore.getConnection`) kept
 * by `RowCache` (checked against `PRAGMA data_version` on every read).
 *
 * Another process may use the file at the same time (the operator CLI, `cli.ts`): the database is
 * in WAL mode, every statement has a short busy timeout and is retried with backoff while busy,
 * and a transaction that cannot begin gives its connection back (`internal/sqlite.ts`), all
 * within `waits`.
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
      const { busyTimeout, wait } = yield* waits
      const dataVersion = yield* changeCounter(url)
      return layerSqlCached(() => Effect.sync(dataVersion)).pipe(
        Layer.provide(LibsqlMigrator.layer({ loader })),
        Layer.provide(writeAheadLog),
        Layer.provide(Sqlite.layer({ url, busyTimeout, wait }))
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
    // Another process migrating may hold the lock for longer than a request's wait: this one waits
    // for it as long as it takes (then the session's own lock timeout again).
    yield* Effect.acquireRelease(
      connection.executeRaw("SET lock_timeout = 0", []).pipe(
        Effect.zipRight(connection.executeRaw(`SELECT pg_advisory_lock(${migrationLock})`, [])),
        Effect.zipRight(connection.executeRaw("RESET lock_timeout", []))
      ),
      () => Effect.ignore(connection.executeRaw(`SELECT pg_advisory_unlock(${migrationLock})`, []))
    )
    yield* PgMigrator.run({ loader })
  }).pipe(Effect.scoped)
).pipe(Layer.provide(NodeContext.layer))

/**
 * `url` with Postgres's `lock_timeout` (ms) as a connection parameter, unless the URL sets one: a
 * statement waits at most that long for a row or table lock another session holds, then fails
 * `55P03` (`isUnavailable`), instead of waiting as long as the lock is held.
 */
const withLockTimeout = (url: string, wait: Duration.Duration): string => {
  const parsed = new URL(url)
  if (parsed.searchParams.has("lock_timeout")) return url
  parsed.searchParams.set("lock_timeout", String(Math.round(Duration.toMillis(wait))))
  return parsed.href
}

/**
 * The stores on Postgres at `url` (`postgres://user:password@host:port/database`), migrated, with
 * the auth rows kept by `RowCache`, checked against the database's `row_generation` once per
 * request (ADR 0030). A pooled connection, and every lock a statement waits for, are had within
 * `TRACEBRIDGE_DATABASE_WAIT_MS` (`waits`) or the statement fails as unavailable.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPg = (url: Redacted.Redacted | string): Layer.Layer<Persistence, DatabaseError> =>
  Layer.unwrapEffect(Effect.map(waits, ({ wait }) =>
    layerSqlCached(pgGeneration).pipe(
      Layer.provide(pgMigrations),
      // A pooled connection within the wait (node-postgres otherwise waits for one forever).
      Layer.provide(PgClient.layer({
        url: Redacted.make(withLockTimeout(Redacted.isRedacted(url) ? Redacted.value(url) : url, wait)),
        connectTimeout: wait
      }))
    )))

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
