/**
 * The connections: one organisation's link to a provider in a state, sandbox or production, with
 * the provider login encrypted (never in plain text) and the sandbox connection's version and
 * fault. Named apart from `services/Connections.ts`, the service that links, lists and
 * disconnects them.
 *
 * SQL over the `SqlClient` in context (SQLite or Postgres, migrated by `Database.ts`). On SQLite,
 * `Database.layerSqlite` puts `getConnection` behind `RowCache`.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer, Schema } from "effect"
import type { Option } from "effect"

const { all, count, exec, flag, one, rows } = SqlRow

/** @since 0.1.0 @category models */
export interface Connection {
  readonly id: string
  readonly organisation_id: string
  readonly provider: string
  readonly state: string
  readonly status: "active" | "inactive" | "error" | "pending"
  readonly is_sandbox: boolean
  readonly external_id: string | null
  /** AES-256-GCM ciphertext of the provider login (base64), or null once erased. */
  readonly credentials: string | null
  readonly key_id: string | null
  /** Whether the connection token has been handed out (it is shown once). */
  readonly token_issued: boolean
  readonly created_at: number
  readonly updated_at: number
  /**
   * A sandbox connection's version: raised by every change appended to its log and by every
   * reset, never lowered. A process's in-memory world is current while it holds this version.
   */
  readonly sandbox_version: number
  /** JSON text of the sandbox connection's upstream fault (`Faults.Fault`), or null. */
  readonly sandbox_fault: string | null
}

/**
 * The filters of {@link Service.searchConnections}; an absent one matches every connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface SearchFilters {
  readonly status?: Connection["status"] | undefined
  readonly provider?: string | undefined
  readonly state?: string | undefined
  readonly external_id?: string | undefined
}

/**
 * Connections. Every method is atomic on its own; `Transactions` runs several as one. The sandbox
 * version and fault are written through `SandboxLog`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly insertConnection: (c: Connection) => Effect.Effect<void>
  readonly getConnection: (id: string) => Effect.Effect<Option.Option<Connection>>
  /** One organisation's connections, oldest first, with the total. */
  readonly listConnections: (
    organisationId: string,
    offset: number,
    limit: number
  ) => Effect.Effect<{ readonly items: ReadonlyArray<Connection>; readonly total: number }>
  /**
   * One organisation's connections matching every given filter (the dashboard's Connections
   * page), oldest first, with the total of the matches.
   */
  readonly searchConnections: (
    organisationId: string,
    filters: SearchFilters,
    offset: number,
    limit: number
  ) => Effect.Effect<{ readonly items: ReadonlyArray<Connection>; readonly total: number }>
  /**
   * Production connections that should sync (`pending` or `active`), made before `createdBefore`,
   * with no facility in the sync at all: their first sync did not start at the link. Oldest first.
   */
  readonly unsyncedProduction: (createdBefore: number, limit: number) => Effect.Effect<ReadonlyArray<Connection>>
  readonly updateConnection: (
    id: string,
    patch: Partial<Pick<Connection, "status" | "credentials" | "key_id" | "token_issued" | "updated_at">>
  ) => Effect.Effect<void>
  /**
   * Stores a re-entered login (update mode) and the status it moves to, in one statement, only
   * while the connection is not `inactive`: false when it was disconnected (then nothing is
   * written, so a submit racing a disconnect never leaves a login on it).
   */
  readonly storeLogin: (
    id: string,
    login: Pick<Connection, "credentials" | "key_id" | "status" | "updated_at">
  ) => Effect.Effect<boolean>
  /** Erases the stored login of an `inactive` connection (a no-op on any other). */
  readonly eraseInactiveLogin: (id: string) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class ConnectionStore extends Context.Tag("Persistence/ConnectionStore")<ConnectionStore, Service>() {}

/** A `connections` row. */
const ConnectionRow = Schema.Struct({
  id: Schema.String,
  organisation_id: Schema.String,
  provider: Schema.String,
  state: Schema.String,
  status: Schema.Literal("active", "inactive", "error", "pending"),
  is_sandbox: SqlRow.BooleanFromColumn,
  external_id: Schema.NullOr(Schema.String),
  credentials: Schema.NullOr(Schema.String),
  key_id: Schema.NullOr(Schema.String),
  token_issued: SqlRow.BooleanFromColumn,
  created_at: SqlRow.NumberFromColumn,
  updated_at: SqlRow.NumberFromColumn,
  sandbox_version: SqlRow.NumberFromColumn,
  sandbox_fault: Schema.NullOr(Schema.String)
})
const toConnection: (row: unknown) => Connection = SqlRow.decoder(ConnectionRow)

/**
 * The store over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => ({
    insertConnection: (c) =>
      exec(
        sql`INSERT INTO connections ${
          sql.insert({ ...c, is_sandbox: flag(c.is_sandbox), token_issued: flag(c.token_issued) })
        }`
      ),
    getConnection: (id) => one(sql`SELECT * FROM connections WHERE id = ${id}`, toConnection),
    unsyncedProduction: (createdBefore, limit) =>
      all(
        sql`SELECT * FROM connections c
            WHERE c.is_sandbox = ${flag(false)} AND c.status IN ('pending', 'active')
              AND c.created_at < ${createdBefore}
              AND NOT EXISTS (SELECT 1 FROM sync_facilities s WHERE s.connection_id = c.id)
            ORDER BY c.created_at, c.id LIMIT ${Math.max(0, limit)}`,
        toConnection
      ),
    listConnections: (organisationId, offset, limit) =>
      Effect.all({
        items: all(
          sql`SELECT * FROM connections WHERE organisation_id = ${organisationId}
              ORDER BY created_at, id LIMIT ${Math.max(0, limit)} OFFSET ${Math.max(0, offset)}`,
          toConnection
        ),
        total: count(sql`SELECT COUNT(*) AS n FROM connections WHERE organisation_id = ${organisationId}`)
      }),
    searchConnections: (organisationId, filters, offset, limit) => {
      const conditions = [sql`organisation_id = ${organisationId}`]
      if (filters.status !== undefined) conditions.push(sql`status = ${filters.status}`)
      if (filters.provider !== undefined) conditions.push(sql`provider = ${filters.provider}`)
      if (filters.state !== undefined) conditions.push(sql`state = ${filters.state}`)
      if (filters.external_id !== undefined) conditions.push(sql`external_id = ${filters.external_id}`)
      const where = sql.and(conditions)
      return Effect.all({
        items: all(
          sql`SELECT * FROM connections WHERE ${where}
              ORDER BY created_at, id LIMIT ${Math.max(0, limit)} OFFSET ${Math.max(0, offset)}`,
          toConnection
        ),
        total: count(sql`SELECT COUNT(*) AS n FROM connections WHERE ${where}`)
      })
    },
    updateConnection: (id, patch) => {
      const set: Record<string, unknown> = {}
      if (patch.status !== undefined) set.status = patch.status
      if (patch.credentials !== undefined) set.credentials = patch.credentials
      if (patch.key_id !== undefined) set.key_id = patch.key_id
      if (patch.token_issued !== undefined) set.token_issued = flag(patch.token_issued)
      if (patch.updated_at !== undefined) set.updated_at = patch.updated_at
      return Object.keys(set).length === 0
        ? Effect.void
        : exec(sql`UPDATE connections SET ${sql.update(set)} WHERE id = ${id}`)
    },
    storeLogin: (id, login) =>
      Effect.map(
        rows(
          sql`UPDATE connections
              SET credentials = ${login.credentials}, key_id = ${login.key_id},
                  status = ${login.status}, updated_at = ${login.updated_at}
              WHERE id = ${id} AND status <> 'inactive'
              RETURNING id`
        ),
        (rs) => rs.length === 1
      ),
    eraseInactiveLogin: (id) =>
      exec(
        sql`UPDATE connections SET credentials = NULL, key_id = NULL
            WHERE id = ${id} AND status = 'inactive' AND (credentials IS NOT NULL OR key_id IS NOT NULL)`
      )
  })
)

/**
 * `ConnectionStore` over the `SqlClient` in context (run the migrations first: `Database.ts` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ConnectionStore, never, SqlClient.SqlClient> = Layer.effect(ConnectionStore, make)
