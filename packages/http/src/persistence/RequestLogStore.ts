/**
 * The request log's rows (issue #33): one per `/v1` request, with the upstream calls it made.
 * Written in batches by the request log's one writer (`RequestLogCapture.ts`), read per
 * organisation newest first with keyset paging (the dashboard's Logs page, `services/RequestLog.ts`),
 * and pruned by age. Everything stored here is already redacted.
 *
 * SQL over the `SqlClient` in context (SQLite or Postgres, migrated by `Database.ts`).
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer, Option, Schema } from "effect"

const { all, exec, one } = SqlRow
const { BooleanFromColumn, NumberFromColumn, NumberOrNullFromColumn } = SqlRow

/**
 * The status classes the log is filtered by.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StatusClass = Schema.Literal("2xx", "4xx", "5xx")

/**
 * @since 0.1.0
 * @category models
 */
export type StatusClass = typeof StatusClass.Type

/**
 * One request as the log lists it (no bodies).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Summary = Schema.Struct({
  request_id: Schema.String,
  organisation_id: Schema.NullOr(Schema.String),
  /** When the request arrived (epoch ms). */
  at: NumberFromColumn,
  method: Schema.String,
  /** The contract's path template (`/v1/connections/:connection_id`), `unmatched` for an unknown path. */
  route: Schema.String,
  /** The path and query as sent, redacted as the access log writes it. */
  path: Schema.String,
  status: NumberFromColumn,
  status_class: Schema.String,
  duration_ms: NumberFromColumn,
  /** The API client id, or `connection:<id>` for a connection token; null when none authenticated. */
  principal: Schema.NullOr(Schema.String),
  connection_id: Schema.NullOr(Schema.String),
  /** The error answer's `code` (`error.code`, or the OAuth `error`). */
  error_code: Schema.NullOr(Schema.String),
  /** How many upstream calls it made. */
  upstream_calls: NumberFromColumn
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Summary extends Schema.Schema.Type<typeof Summary> {}

/**
 * One request with its bodies.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Entry = Schema.Struct({
  ...Summary.fields,
  /** The request body as JSON text, redacted; null when it had none (or was not JSON). */
  request_body: Schema.NullOr(Schema.String),
  /** Whether `request_body` was cut at the cap. */
  request_body_truncated: BooleanFromColumn,
  /** The error answer's body as JSON text, redacted; null for a success. */
  error_body: Schema.NullOr(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Entry extends Schema.Schema.Type<typeof Entry> {}

/**
 * One upstream call of a request.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Call = Schema.Struct({
  request_id: Schema.String,
  /** 1 for the request's first upstream call, in the order they were sent. */
  n: NumberFromColumn,
  /** When it was sent (epoch ms). */
  at: NumberFromColumn,
  provider: Schema.String,
  state: Schema.String,
  /** The port method it served (`listPackages`), when known. */
  operation: Schema.NullOr(Schema.String),
  method: Schema.String,
  /** The path and query, with no secret (`RequestLog.redactUrl` and the configured secrets). */
  path: Schema.String,
  /** The HTTP status; null when no answer came (`failure` says why). */
  status: NumberOrNullFromColumn,
  /** `timeout`, `transport` or `interrupted` when no answer came. */
  failure: Schema.NullOr(Schema.String),
  duration_ms: NumberFromColumn,
  /** 1, or n for the n-th try of the same call after failed ones. */
  attempt: NumberFromColumn,
  /** Whether the answer was a 429. */
  rate_limited: BooleanFromColumn,
  /** The provider's own error code, where its adapter knows one (BioTrack's `errorcode`). */
  error_code: Schema.NullOr(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Call extends Schema.Schema.Type<typeof Call> {}

/**
 * What the list can be narrowed to (all given must hold).
 *
 * @since 0.1.0
 * @category models
 */
export interface Filters {
  readonly status_class?: StatusClass | undefined
  readonly route?: string | undefined
  readonly connection_id?: string | undefined
  readonly request_id?: string | undefined
}

/**
 * Where a page starts: after this row in newest-first order.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cursor {
  readonly at: number
  readonly request_id: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Stores entries, then their calls: one multi-row insert per table. */
  readonly insertBatch: (
    batch: ReadonlyArray<{ readonly entry: Entry; readonly calls: ReadonlyArray<Call> }>
  ) => Effect.Effect<void>
  /** One organisation's entries, newest first, after `cursor`, at most `limit`. */
  readonly list: (
    organisationId: string,
    filters: Filters,
    cursor: Cursor | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<Summary>>
  /** One entry of the organisation with its upstream calls in order; none for another organisation's. */
  readonly get: (
    organisationId: string,
    requestId: string
  ) => Effect.Effect<Option.Option<{ readonly entry: Entry; readonly calls: ReadonlyArray<Call> }>>
  /** How many of the organisation's requests arrived at `since` or later, per status class. */
  readonly countsSince: (
    organisationId: string,
    since: number
  ) => Effect.Effect<ReadonlyArray<{ readonly status_class: string; readonly n: number }>>
  /** Deletes the entries (and their calls) that arrived before `before` (epoch ms); answers how many. */
  readonly prune: (before: number) => Effect.Effect<number>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class RequestLogStore extends Context.Tag("Persistence/RequestLogStore")<RequestLogStore, Service>() {}

const toSummary = SqlRow.decoder(Summary)
const toEntry = SqlRow.decoder(Entry)
const toCall = SqlRow.decoder(Call)
/** Rows per insert statement: 16 columns each stays under SQLite's 32766 parameters (Postgres: 65535). */
const INSERT_ROWS = 1000
const ClassCount = Schema.Struct({ status_class: Schema.String, n: NumberFromColumn })
const toClassCount = SqlRow.decoder(ClassCount)
const RequestId = Schema.Struct({ request_id: Schema.String })
const toRequestId = SqlRow.decoder(RequestId)

/** The columns of a listed entry. */
const summaryColumns = [
  "request_id",
  "organisation_id",
  "at",
  "method",
  "route",
  "path",
  "status",
  "status_class",
  "duration_ms",
  "principal",
  "connection_id",
  "error_code",
  "upstream_calls"
]

/**
 * Entries a prune deletes per round (three short statements): writers are not held up.
 *
 * @since 0.1.0
 * @category constants
 */
export const PRUNE_CHUNK = 1000

/**
 * The store over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => {
    const columns = sql.literal(summaryColumns.join(", "))
    return {
      insertBatch: (batch) => {
        if (batch.length === 0) return Effect.void
        // rows as stored (flags 0/1), built directly: a batch holds up to a thousand
        const entries = batch.map((b) => ({
          ...b.entry,
          request_body_truncated: SqlRow.flag(b.entry.request_body_truncated)
        }))
        const calls = batch.flatMap((b) => b.calls.map((c) => ({ ...c, rate_limited: SqlRow.flag(c.rate_limited) })))
        // Two single statements, not a transaction: each multi-row insert is atomic on its own, and
        // the log never holds the embedded database's one transaction connection, which requests
        // and the health probe need (the calls follow their entries; a failed second insert leaves
        // entries without their calls, never calls without an entry).
        return Effect.gen(function*() {
          for (let i = 0; i < entries.length; i += INSERT_ROWS) {
            yield* exec(sql`INSERT INTO request_log ${sql.insert(entries.slice(i, i + INSERT_ROWS))}`)
          }
          for (let i = 0; i < calls.length; i += INSERT_ROWS) {
            yield* exec(sql`INSERT INTO request_log_calls ${sql.insert(calls.slice(i, i + INSERT_ROWS))}`)
          }
        })
      },
      list: (organisationId, filters, cursor, limit) => {
        const conditions = [sql`organisation_id = ${organisationId}`]
        if (filters.status_class !== undefined) conditions.push(sql`status_class = ${filters.status_class}`)
        if (filters.route !== undefined) conditions.push(sql`route = ${filters.route}`)
        if (filters.connection_id !== undefined) conditions.push(sql`connection_id = ${filters.connection_id}`)
        if (filters.request_id !== undefined) conditions.push(sql`request_id = ${filters.request_id}`)
        if (cursor !== undefined) {
          conditions.push(
            sql`(at < ${cursor.at} OR (at = ${cursor.at} AND request_id < ${cursor.request_id}))`
          )
        }
        return all(
          sql`SELECT ${columns} FROM request_log WHERE ${sql.and(conditions)}
              ORDER BY at DESC, request_id DESC LIMIT ${Math.max(0, limit)}`,
          toSummary
        )
      },
      get: (organisationId, requestId) =>
        Effect.gen(function*() {
          const found = yield* one(
            sql`SELECT * FROM request_log WHERE request_id = ${requestId} AND organisation_id = ${organisationId}`,
            toEntry
          )
          if (Option.isNone(found)) return Option.none()
          const calls = yield* all(
            sql`SELECT * FROM request_log_calls WHERE request_id = ${requestId} ORDER BY n`,
            toCall
          )
          return Option.some({ entry: found.value, calls })
        }),
      countsSince: (organisationId, since) =>
        all(
          sql`SELECT status_class, COUNT(*) AS n FROM request_log
              WHERE organisation_id = ${organisationId} AND at >= ${since} GROUP BY status_class`,
          toClassCount
        ),
      prune: (before) =>
        Effect.gen(function*() {
          let deleted = 0
          for (;;) {
            // single statements (no transaction held): the calls go first, so that a prune cut
            // short leaves no call without its entry
            const ids = (yield* all(
              sql`SELECT request_id FROM request_log WHERE at < ${before} ORDER BY at LIMIT ${PRUNE_CHUNK}`,
              toRequestId
            )).map((r) => r.request_id)
            if (ids.length > 0) {
              yield* exec(sql`DELETE FROM request_log_calls WHERE ${sql.in("request_id", ids)}`)
              yield* exec(sql`DELETE FROM request_log WHERE ${sql.in("request_id", ids)}`)
            }
            const chunk = ids.length
            deleted += chunk
            if (chunk < PRUNE_CHUNK) return deleted
          }
        })
    }
  }
)

/**
 * `RequestLogStore` over the `SqlClient` in context (run the migrations first: `Database.ts` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<RequestLogStore, never, SqlClient.SqlClient> = Layer.effect(RequestLogStore, make)
