/**
 * The `SqlClient` of the embedded SQLite (libsql), made so that the database never wedges when
 * another process (the operator CLI, a second server) writes to the same file (issue #28):
 *
 * - two kept connections, one for single statements and one for transactions (one at a time,
 *   and no single statement during one: one permit, as in the stock `LibsqlClient`), each with a
 *   short busy timeout (`PRAGMA busy_timeout`). The binding is synchronous, so SQLite's own wait
 *   blocks the event loop: it stays short, and longer waits are retries on an Effect `Schedule` (exponential,
 *   jittered, capped) that sleep without blocking, all within `wait`;
 * - the permit is taken within `wait`, and given back when `BEGIN` fails (the stock
 *   `LibsqlClient` keeps it when its `BEGIN` fails, and every later statement waits forever); it
 *   is a `Permit`, not a `Semaphore` under a timeout, which can lose it when the wait ends as it
 *   comes free;
 * - a connection on which a statement failed busy or locked is closed and opened again: libsql
 *   leaves such a statement in progress, and until the garbage collector finalizes it every
 *   `COMMIT` on that connection fails (tursodatabase/libsql-client-ts#352);
 * - when the database cannot be had within `wait`, the statement fails with a `SqlError` whose
 *   cause is `Unavailable` (`isUnavailable`), which the API answers 503 `service_unavailable`;
 * - each connection keeps its statements prepared, by their text (`Kept`), through libsql's native
 *   binding rather than `@libsql/client`, which prepared every statement again on every call.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient, SqlError, Statement } from "@effect/sql"
import type { SqlConnection } from "@effect/sql"
import { Cause, Clock, Data, Duration, Effect, Exit, Layer, Schedule, Scope } from "effect"
import NativeDatabase from "libsql"
import { Buffer } from "node:buffer"
import { fileURLToPath } from "node:url"
import { Lru } from "../../Lru.js"
import * as Permit from "./Permit.js"

/**
 * The database could not be had within the wait: busy or locked by another connection past the
 * retries, or the transaction connection still in use.
 */
export class Unavailable extends Data.TaggedError("DatabaseUnavailable")<{ readonly reason: string }> {
  override get message() {
    return `The database is unavailable: ${this.reason}`
  }
}

/** SQLite's "another connection has the lock" codes (`SQLITE_BUSY`, `SQLITE_LOCKED` and their extended codes). */
export const isBusy = (error: unknown): boolean => {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === "object" && depth < 5; depth++) {
    const code = (e as { readonly code?: unknown }).code
    if (typeof code === "string" && /^SQLITE_(BUSY|LOCKED)/.test(code)) return true
    if (e instanceof Unavailable) return true
    e = (e as { readonly cause?: unknown }).cause
  }
  return false
}

export interface Options {
  /** `file:` URL of the database. */
  readonly url: string
  /** SQLite's own wait for a lock, per statement (`PRAGMA busy_timeout`); it blocks the event loop. */
  readonly busyTimeout: Duration.Duration
  /** The longest a statement or a transaction's start waits for the database, retries included. */
  readonly wait: Duration.Duration
}

/** What one statement gave: its rows (objects by column name, or arrays by position), or what it changed. */
export interface Result {
  readonly rows: ReadonlyArray<unknown>
  readonly rowsAffected: number
  readonly lastInsertRowid: number | bigint | undefined
}

/** The statements kept prepared per connection (by their text, least recently used out first). */
export const STATEMENTS_KEPT = 256

/** A prepared statement and whether it returns rows (asked of SQLite once). */
interface Prepared {
  readonly statement: NativeStatement
  readonly reader: boolean
}

type NativeStatement = ReturnType<InstanceType<typeof NativeDatabase>["prepare"]>

/**
 * A parameter as the native binding takes it, converted as `@libsql/client` did: a boolean is 1 or
 * 0 (the binding aborts the process on a boolean), a date its milliseconds, bytes a `Buffer`;
 * `undefined`, a number that is not finite and any other object are refused (a `TypeError`).
 */
const toArg = (value: unknown): unknown => {
  switch (typeof value) {
    case "string":
    case "bigint":
      return value
    case "number":
      if (!Number.isFinite(value)) throw new RangeError(`Only finite numbers can be bound, not ${value}`)
      return value
    case "boolean":
      return value ? 1 : 0
    case "object":
      if (value === null || Buffer.isBuffer(value)) return value
      if (value instanceof Date) return value.valueOf()
      if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      if (value instanceof ArrayBuffer) return Buffer.from(value)
  }
  throw new TypeError(`${value === undefined ? "undefined" : typeof value} cannot be bound as a SQL parameter`)
}

const toArgs = (params: ReadonlyArray<unknown>): Array<unknown> => {
  for (let i = 0; i < params.length; i++) {
    const value = params[i]
    if (typeof value !== "string" && typeof value !== "number" && value !== null) return params.map(toArg)
    if (typeof value === "number" && !Number.isFinite(value)) return params.map(toArg)
  }
  return params as Array<unknown>
}

/** A `file:` URL's path (`file:///abs`, `file:/abs` or `file:relative`, any query left out). */
export const pathOf = (url: string): string => {
  if (url.startsWith("file://")) return fileURLToPath(url.split("?")[0]!)
  const rest = url.startsWith("file:") ? url.slice(5) : url
  return decodeURIComponent(rest.split("?")[0]!)
}

/**
 * One kept connection through libsql's native binding (the one `@libsql/client` wraps), opened
 * with the busy timeout, replaced after a busy failure. Its statements stay prepared, by their
 * text: `@libsql/client` prepared each statement again on every call and rebuilt every row as an
 * object with a property per column and per position, about a third of a store read's CPU (issue
 * #35, bench row 9). Rows come as plain objects, integers as numbers (those past 2^53 lose
 * precision: no column here comes near), and a failed statement leaves no lock behind (SQLite
 * resets it), so it stays kept.
 */
class Kept {
  private db: InstanceType<typeof NativeDatabase> | undefined
  private statements = new Lru<Prepared>(STATEMENTS_KEPT)
  /** A transaction is open on the current connection. */
  open = false
  constructor(private readonly path: string, private readonly busyTimeoutMs: number) {}

  private connection(): InstanceType<typeof NativeDatabase> {
    if (this.db === undefined) {
      const db = new NativeDatabase(this.path)
      db.exec(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`)
      this.db = db
    }
    return this.db
  }

  private prepared(sql: string): Prepared {
    let prepared = this.statements.get(sql)
    if (prepared === undefined) {
      const statement = this.connection().prepare(sql)
      prepared = { statement, reader: statement.reader }
      this.statements.set(sql, prepared)
    }
    return prepared
  }

  /** Closes the connection (which rolls back a transaction open on it); the next statement opens another. */
  drop() {
    const db = this.db
    this.db = undefined
    this.statements = new Lru<Prepared>(STATEMENTS_KEPT)
    this.open = false
    try {
      db?.close()
    } catch {
      // already closed
    }
  }

  /** Runs one statement: its rows as objects, or as arrays with `arrays`. Synchronous. */
  execute(sql: string, params: ReadonlyArray<unknown> = [], arrays = false): Result {
    try {
      const { reader, statement } = this.prepared(sql)
      const args = toArgs(params)
      if (reader) {
        statement.raw(arrays)
        return { rows: statement.all(args), rowsAffected: 0, lastInsertRowid: undefined }
      }
      const info = statement.run(args)
      return { rows: [], rowsAffected: info.changes, lastInsertRowid: info.lastInsertRowid }
    } catch (error) {
      // libsql leaves a statement that failed busy or locked in progress, and until it is
      // finalized every COMMIT on its connection fails (tursodatabase/libsql-client-ts#352)
      if (isBusy(error)) this.drop()
      throw error
    }
  }

  close() {
    this.drop()
  }
}

/**
 * The database's waits run on the real clock, whatever clock the program runs on: a lock another
 * process holds is released in real time (and a test clock would keep a timer per statement).
 */
const realClock = Clock.make()
const onRealClock = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withClock(effect, realClock)

const sqlError = (message: string) => (cause: unknown) => new SqlError.SqlError({ cause, message })

/** Retries while busy: exponential from 5 ms, jittered, at most 200 ms apart, for `wait` in all. */
const busyRetry = (wait: Duration.Duration) =>
  Schedule.exponential(Duration.millis(5)).pipe(
    Schedule.union(Schedule.spaced(Duration.millis(200))),
    Schedule.jittered,
    Schedule.upTo(wait)
  )

/** After the retries, a busy failure is `Unavailable`. */
const unavailableAfterRetries = (what: string) => (error: SqlError.SqlError) =>
  isBusy(error)
    ? new SqlError.SqlError({
      cause: new Unavailable({ reason: `${what}: ${String(error.cause)}` }),
      message: error.message
    })
    : error

class Connection implements SqlConnection.Connection {
  constructor(
    private readonly kept: Kept,
    /** Retry a busy statement (single statements; a statement inside a transaction cannot be retried alone). */
    private readonly retry: Schedule.Schedule<unknown, unknown> | undefined
  ) {}

  private run(sql: string, params: ReadonlyArray<unknown> = [], arrays = false) {
    const once = Effect.try({
      try: () => this.kept.execute(sql, params, arrays),
      catch: sqlError("Failed to execute statement")
    })
    return this.retry === undefined
      ? once
      : once.pipe(
        Effect.retry({ schedule: this.retry, while: (e) => isBusy(e) }),
        onRealClock,
        Effect.mapError(unavailableAfterRetries("the statement waited for the database's lock"))
      )
  }

  execute(
    sql: string,
    params: ReadonlyArray<unknown>,
    transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ) {
    const rows = Effect.map(
      this.run(sql, params),
      (result) => result.rows as ReadonlyArray<Record<string, unknown>>
    )
    return transformRows ? Effect.map(rows, transformRows) : rows
  }
  executeRaw(sql: string, params: ReadonlyArray<unknown>) {
    return this.run(sql, params)
  }
  executeValues(sql: string, params: ReadonlyArray<unknown>) {
    return Effect.map(this.run(sql, params, true), (result) => result.rows as ReadonlyArray<ReadonlyArray<unknown>>)
  }
  executeUnprepared(
    sql: string,
    params: ReadonlyArray<unknown>,
    transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ) {
    return this.execute(sql, params, transformRows)
  }
  executeStream() {
    return Effect.dieMessage("executeStream not implemented")
  }
}

/**
 * The client: single statements on one kept connection, transactions (`BEGIN IMMEDIATE`) one at a
 * time on the other.
 */
export const make = (
  options: Options
): Effect.Effect<SqlClient.SqlClient, never, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const busyTimeoutMs = Math.max(0, Math.round(Duration.toMillis(options.busyTimeout)))
    const file = pathOf(options.url)
    const single = yield* Effect.acquireRelease(
      Effect.sync(() => new Kept(file, busyTimeoutMs)),
      (kept) => Effect.sync(() => kept.close())
    )
    const txs = yield* Effect.acquireRelease(
      Effect.sync(() => new Kept(file, busyTimeoutMs)),
      (kept) => Effect.sync(() => kept.close())
    )
    const retry = busyRetry(options.wait)
    const singleConnection = new Connection(single, retry)
    const txConnection = new Connection(txs, undefined)
    const permit = Permit.make(1)
    const spanAttributes: Array<[string, unknown]> = [["db.system.name", "sqlite"]]

    const begin = Effect.try({
      try: () => {
        txs.execute("BEGIN IMMEDIATE")
        txs.open = true
      },
      catch: sqlError("Failed to begin transaction")
    }).pipe(
      Effect.retry({ schedule: retry, while: (e) => isBusy(e) }),
      onRealClock,
      Effect.mapError(unavailableAfterRetries("the transaction waited for the database's write lock"))
    )
    const end = (statement: "COMMIT" | "ROLLBACK") =>
      Effect.try({
        try: () => {
          // A connection dropped after a busy failure has rolled back already.
          if (!txs.open) {
            if (statement === "COMMIT") throw new Unavailable({ reason: "the transaction's connection was lost" })
            return
          }
          try {
            txs.execute(statement)
            txs.open = false
          } catch (error) {
            // SQLite may have ended the transaction already (some errors roll it back); a
            // connection left in doubt is dropped, which rolls back whatever is open on it.
            txs.drop()
            throw error
          }
        },
        catch: sqlError(`Failed to ${statement === "COMMIT" ? "commit" : "roll back"} transaction`)
      })

    /**
     * The one permit for the scope, within `wait` (on the real clock); past it, unavailable. Not
     * `Semaphore.take` under a timeout, which can lose the permit (`Permit.ts`).
     */
    const takePermit = (reason: string, message: string) =>
      Effect.flatMap(permit.take(options.wait), (had) =>
        had
          ? Effect.void
          : Effect.fail(new SqlError.SqlError({ cause: new Unavailable({ reason }), message })))

    /**
     * The transaction connection: the permit within `wait`, then `BEGIN IMMEDIATE` (retried while
     * busy). The permit is released by the scope, which is closed at once when `BEGIN` fails.
     */
    const acquireConnection = Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const had = yield* Effect.exit(restore(
          Scope.extend(takePermit("the transaction connection stayed in use", "Failed to begin transaction"), scope)
        ))
        if (Exit.isFailure(had)) {
          yield* Scope.close(scope, Exit.void)
          return yield* Effect.failCause(had.cause)
        }
        const began = yield* Effect.exit(restore(begin))
        if (Exit.isFailure(began)) {
          yield* Scope.close(scope, Exit.void)
          return yield* Effect.failCause(began.cause)
        }
        return [scope, txConnection as SqlConnection.Connection] as const
      })
    )

    const withTransaction = SqlClient.makeWithTransaction({
      transactionTag: SqlClient.TransactionConnection,
      spanAttributes,
      acquireConnection,
      begin: () => Effect.void, // begun in acquireConnection
      savepoint: (conn, id) => conn.executeRaw(`SAVEPOINT effect_sql_${id};`, []),
      commit: () => end("COMMIT"),
      rollback: () => end("ROLLBACK"),
      rollbackSavepoint: (conn, id) => conn.executeRaw(`ROLLBACK TO SAVEPOINT effect_sql_${id};`, [])
    })

    /**
     * A single statement runs while no transaction does (as with the stock client): the permit is
     * held for the statement, taken within `wait`. Without it, a statement writing beside this
     * process's own open transaction meets SQLite's lock, and each try blocks the process for the
     * busy timeout while the transaction it waits for cannot move.
     */
    const acquireSingle: Effect.Effect<SqlConnection.Connection, SqlError.SqlError, Scope.Scope> = takePermit(
      "a transaction kept the database",
      "Failed to execute statement"
    ).pipe(Effect.as(singleConnection))

    const client = yield* SqlClient.make({
      acquirer: acquireSingle,
      // `reserve`: the transaction connection with its permit, for the reservation's scope.
      transactionAcquirer: Effect.flatMap(acquireConnection, ([scope, conn]) =>
        Effect.as(Effect.addFinalizer((exit) => Scope.close(scope, exit)), conn)),
      compiler: Statement.makeCompilerSqlite(),
      spanAttributes
    })
    return Object.assign(client, { withTransaction }) as SqlClient.SqlClient
  })

/** `make` as the `SqlClient` layer. */
export const layer = (options: Options): Layer.Layer<SqlClient.SqlClient> =>
  Layer.scoped(SqlClient.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))

/** The cause of a failure or defect is the database being unavailable (busy or locked past the wait). */
export const causeIsUnavailable = <E>(cause: Cause.Cause<E>): boolean =>
  [...Cause.failures(cause), ...Cause.defects(cause)].some(isBusy)
