/**
 * The schema, as `@effect/sql` migrations (`Migrator.fromRecord`; keys are `NNNN_name`, run in
 * order, each once). The SQL runs on SQLite and Postgres alike: times are BIGINT epoch
 * milliseconds (INTEGER affinity in SQLite), flags are 0/1 INTEGERs, and identifiers that
 * listings sort on use byte order on Postgres (`COLLATE "C"`, SQLite's default), so that both
 * backends list in the same order.
 *
 * Append a new entry for every change; never edit one that has shipped.
 *
 * @since 0.1.0
 */
import { Migrator, SqlClient } from "@effect/sql"
import { Effect } from "effect"

const initial = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // An identifier ordered on (ORDER BY … id): byte order on both backends.
  const key = sql.onDialectOrElse({
    pg: () => sql.literal(`TEXT COLLATE "C"`),
    orElse: () => sql.literal("TEXT")
  })

  yield* sql`CREATE TABLE organisations (
    id ${key} PRIMARY KEY,
    name TEXT NOT NULL,
    plan TEXT NOT NULL,
    created_at BIGINT NOT NULL
  )`

  yield* sql`CREATE TABLE api_clients (
    id TEXT PRIMARY KEY,
    organisation_id TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
  )`
  yield* sql`CREATE INDEX api_clients_organisation ON api_clients (organisation_id)`

  yield* sql`CREATE TABLE tokens (
    hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    organisation_id TEXT NOT NULL,
    client_id TEXT,
    connection_id TEXT,
    family TEXT,
    scope TEXT NOT NULL,
    expires_at BIGINT,
    created_at BIGINT NOT NULL,
    used_at BIGINT,
    revoked_at BIGINT
  )`
  yield* sql`CREATE INDEX tokens_family ON tokens (family)`
  yield* sql`CREATE INDEX tokens_connection ON tokens (connection_id)`

  yield* sql`CREATE TABLE link_tokens (
    hash TEXT PRIMARY KEY,
    organisation_id TEXT NOT NULL,
    environment TEXT NOT NULL,
    metadata TEXT NOT NULL,
    redirect_uri TEXT,
    state TEXT,
    external_id TEXT,
    connection_id TEXT,
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL
  )`

  yield* sql`CREATE TABLE public_tokens (
    hash TEXT PRIMARY KEY,
    organisation_id TEXT NOT NULL,
    connection_id TEXT NOT NULL,
    client_state TEXT,
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    used_at BIGINT
  )`

  yield* sql`CREATE TABLE connections (
    id ${key} PRIMARY KEY,
    organisation_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    state TEXT NOT NULL,
    status TEXT NOT NULL,
    is_sandbox INTEGER NOT NULL,
    external_id TEXT,
    credentials TEXT,
    key_id TEXT,
    token_issued INTEGER NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX connections_organisation ON connections (organisation_id, created_at, id)`

  yield* sql`CREATE TABLE sandbox_changes (
    connection_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    change TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (connection_id, seq)
  )`
})

/**
 * Every migration, for the driver's migrator layer (`LibsqlMigrator.layer({ loader })`,
 * `PgMigrator.layer({ loader })`).
 *
 * @since 0.1.0
 * @category migrations
 */
export const loader: Migrator.Loader = Migrator.fromRecord({
  "0001_initial": initial
})
