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
import { SyncStore } from "@tracebridge/sync"
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

/** Webhooks: endpoints, the event outbox, deliveries with their attempts, the poller's snapshots. */
const webhooks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const key = sql.onDialectOrElse({
    pg: () => sql.literal(`TEXT COLLATE "C"`),
    orElse: () => sql.literal("TEXT")
  })

  yield* sql`CREATE TABLE webhook_endpoints (
    id ${key} PRIMARY KEY,
    organisation_id TEXT NOT NULL,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    description TEXT,
    status TEXT NOT NULL,
    secret TEXT NOT NULL,
    key_id TEXT NOT NULL,
    previous_secret TEXT,
    previous_key_id TEXT,
    previous_expires_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX webhook_endpoints_organisation ON webhook_endpoints (organisation_id, created_at, id)`

  yield* sql`CREATE TABLE webhook_events (
    id TEXT PRIMARY KEY,
    organisation_id TEXT NOT NULL,
    connection_id TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at BIGINT NOT NULL
  )`

  yield* sql`CREATE TABLE webhook_deliveries (
    id ${key} PRIMARY KEY,
    organisation_id TEXT NOT NULL,
    endpoint_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at BIGINT,
    locked_until BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at)`
  yield* sql`CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at, id)`

  yield* sql`CREATE TABLE webhook_attempts (
    delivery_id ${key} NOT NULL,
    n INTEGER NOT NULL,
    at BIGINT NOT NULL,
    status_code INTEGER,
    error TEXT,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (delivery_id, n)
  )`

  yield* sql`CREATE TABLE poll_snapshots (
    connection_id TEXT PRIMARY KEY,
    snapshot TEXT NOT NULL,
    polled_at BIGINT NOT NULL
  )`
})

/** Link tokens are single use: the Connect page marks one used once it produced a public token. */
const linkTokenUsed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE link_tokens ADD COLUMN used_at BIGINT`
})

/** Claimed `Idempotency-Key`s: the primary key lets one of two concurrent claims win. */
const idempotencyKeys = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE idempotency_keys (
    scope TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    state TEXT NOT NULL,
    response TEXT,
    key_id TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (scope, idem_key)
  )`
  yield* sql`CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at)`
})

/**
 * Rate-limit buckets shared by every process on the database: `tokens` left at `updated_at`
 * (epoch ms from the service's Clock), and whether the last take was allowed (`RETURNING` sees
 * only the new row). Full idle buckets are deleted by `updated_at`.
 */
const rateLimitBuckets = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE rate_limit_buckets (
    key TEXT PRIMARY KEY,
    tokens DOUBLE PRECISION NOT NULL,
    allowed INTEGER NOT NULL,
    updated_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX rate_limit_buckets_updated_at ON rate_limit_buckets (updated_at)`
})

/**
 * Sandbox state shared by every process on the database (DECISIONS "Several API nodes"): each
 * connection's version (raised by every appended change and every reset; a change's `seq` is the
 * version it made) and its upstream fault. A log stored before this migration keeps its
 * sequences, and its connection starts at its last one.
 */
const sandboxVersions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE connections ADD COLUMN sandbox_version INTEGER NOT NULL DEFAULT 0`
  yield* sql`ALTER TABLE connections ADD COLUMN sandbox_fault TEXT`
  yield* sql`UPDATE connections SET sandbox_version = COALESCE(
    (SELECT MAX(s.seq) FROM sandbox_changes s WHERE s.connection_id = connections.id), 0)`
})

/**
 * The Connect widget's branding (DECISIONS "Connect widget branding"): the name it shows (the
 * request's `client_name`, else the organisation's name) and an optional https logo URL. Link
 * tokens stored before this migration have neither: the page falls back to the organisation's name.
 */
const linkTokenBranding = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE link_tokens ADD COLUMN client_name TEXT`
  yield* sql`ALTER TABLE link_tokens ADD COLUMN logo_url TEXT`
})

/**
 * The upstream rate governor's buckets (ADR 0015): one per provider, vendor key fingerprint and
 * licence, shared by every node. `tokens` may be negative (tokens reserved ahead); `updated_at`
 * may be ahead of now (a 429's `Retry-After` pauses the bucket until then); `rate` and `burst`
 * are those of the last reservation.
 */
const upstreamRateBuckets = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE upstream_rate_buckets (
    key TEXT PRIMARY KEY,
    tokens DOUBLE PRECISION NOT NULL,
    updated_at BIGINT NOT NULL,
    rate DOUBLE PRECISION NOT NULL,
    burst DOUBLE PRECISION NOT NULL
  )`
})

/**
 * Webhook attempts counted before they are sent (issue #28): `claims` is the number of attempts a
 * worker started (raised by the claim, or written as 1 with a delivery queued held by its worker),
 * `attempts` the number recorded. A process that dies or hangs mid-attempt leaves `claims` ahead of
 * `attempts`, and a delivery with too many such unfinished attempts is dead-lettered instead of
 * sent again. Existing rows start with every attempt recorded.
 */
const webhookAttemptClaims = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_deliveries ADD COLUMN claims INTEGER NOT NULL DEFAULT 0`
  yield* sql`UPDATE webhook_deliveries SET claims = attempts`
})

/**
 * An organisation's allowed redirect origins (issue #28, ADR 0019): a JSON array of origins, or
 * null for none (any origin the plan allows).
 */
const redirectOrigins = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE organisations ADD COLUMN redirect_origins TEXT`
})

/**
 * API client rotation (issue #28, `npm run admin -- rotate-client`): the secret a rotation
 * replaced, and when it stops working. Until then both secrets authenticate the client; a client
 * never rotated has neither. `revoke-client` revokes the client's tokens by `client_id`: indexed.
 */
const apiClientRotation = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_clients ADD COLUMN previous_secret_hash TEXT`
  yield* sql`ALTER TABLE api_clients ADD COLUMN previous_secret_expires_at BIGINT`
  // `revoke-client` revokes the client's tokens too
  yield* sql`CREATE INDEX tokens_client ON tokens (client_id)`
})

/**
 * The span that caused a webhook event (issue #32): its W3C `traceparent`, when traces are
 * exported, so that each delivery attempt's span links back to the request or poll behind it.
 */
const webhookEventTraceParent = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_events ADD COLUMN trace_parent TEXT`
})

/**
 * The events' reads (issue #34): `GET /v1/events` lists an organisation's events newest first,
 * optionally of one connection; a summary reads an event's deliveries; the retention job deletes
 * the oldest.
 */
const eventReads = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX webhook_events_organisation ON webhook_events (organisation_id, created_at, id)`
  yield* sql`CREATE INDEX webhook_events_connection ON webhook_events (organisation_id, connection_id, created_at)`
  yield* sql`CREATE INDEX webhook_events_created ON webhook_events (created_at)`
  yield* sql`CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id)`
})

/**
 * The dashboard's accounts (issue #33, ADR 0026): its users (a password hash with its scrypt
 * parameters; a TOTP secret sealed with the `Crypto` service, with its key id), their memberships
 * of organisations with a role, invitations (the token stored as its hash; no e-mail for the first
 * start's owner link), sessions (stored under the hash of the cookie's value; the CSRF token is
 * derived from the cookie's value, never stored), failed sign-ins (keyed by account and by address,
 * for the throttle), and the audit log. API clients get who made them (a user id; null for the CLI)
 * and when a token was last issued for them.
 */
const dashboardAccounts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const key = sql.onDialectOrElse({
    pg: () => sql.literal(`TEXT COLLATE "C"`),
    orElse: () => sql.literal("TEXT")
  })
  yield* sql`CREATE TABLE dashboard_users (
    id ${key} PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    totp_secret TEXT,
    totp_key_id TEXT,
    totp_enabled INTEGER NOT NULL DEFAULT 0,
    totp_last_step BIGINT,
    created_at BIGINT NOT NULL
  )`
  yield* sql`CREATE TABLE dashboard_memberships (
    user_id TEXT NOT NULL,
    organisation_id TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, organisation_id)
  )`
  yield* sql`CREATE INDEX dashboard_memberships_organisation ON dashboard_memberships (organisation_id)`
  yield* sql`CREATE TABLE dashboard_invitations (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    organisation_id TEXT NOT NULL,
    email TEXT,
    role TEXT NOT NULL,
    invited_by TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
  )`
  yield* sql`CREATE TABLE dashboard_sessions (
    id_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    organisation_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX dashboard_sessions_user ON dashboard_sessions (user_id)`
  yield* sql`CREATE TABLE dashboard_sign_in_failures (
    key TEXT NOT NULL,
    at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX dashboard_sign_in_failures_key ON dashboard_sign_in_failures (key, at)`
  yield* sql`CREATE TABLE dashboard_audit (
    id ${key} PRIMARY KEY,
    organisation_id TEXT NOT NULL,
    actor_id TEXT,
    actor_email TEXT,
    action TEXT NOT NULL,
    target TEXT,
    detail TEXT NOT NULL,
    at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX dashboard_audit_organisation ON dashboard_audit (organisation_id, at, id)`
  yield* sql`ALTER TABLE api_clients ADD COLUMN created_by TEXT`
  yield* sql`ALTER TABLE api_clients ADD COLUMN last_used_at BIGINT`
})

/**
 * The request log (issue #33, `RequestLogStore`): one row per `/v1` request, newest read first per
 * organisation (filtered by status class, route template or connection), and the upstream calls
 * each made. Rows are written in batches by one writer and pruned by age (`at`), the calls with
 * their request. Bodies are stored redacted (`Redact.json`), never a secret.
 */
const requestLog = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const key = sql.onDialectOrElse({
    pg: () => sql.literal(`TEXT COLLATE "C"`),
    orElse: () => sql.literal("TEXT")
  })
  yield* sql`CREATE TABLE request_log (
    request_id ${key} PRIMARY KEY,
    organisation_id TEXT,
    at BIGINT NOT NULL,
    method TEXT NOT NULL,
    route TEXT NOT NULL,
    path TEXT NOT NULL,
    status INTEGER NOT NULL,
    status_class TEXT NOT NULL,
    duration_ms DOUBLE PRECISION NOT NULL,
    principal TEXT,
    connection_id TEXT,
    error_code TEXT,
    request_body TEXT,
    request_body_truncated INTEGER NOT NULL,
    error_body TEXT,
    upstream_calls INTEGER NOT NULL
  )`
  yield* sql`CREATE INDEX request_log_organisation ON request_log (organisation_id, at, request_id)`
  yield* sql`CREATE INDEX request_log_status_class ON request_log (organisation_id, status_class, at, request_id)`
  yield* sql`CREATE INDEX request_log_route ON request_log (organisation_id, route, at, request_id)`
  yield* sql`CREATE INDEX request_log_connection ON request_log (organisation_id, connection_id, at, request_id)`
  yield* sql`CREATE INDEX request_log_at ON request_log (at)`

  yield* sql`CREATE TABLE request_log_calls (
    request_id ${key} NOT NULL,
    n INTEGER NOT NULL,
    at BIGINT NOT NULL,
    provider TEXT NOT NULL,
    state TEXT NOT NULL,
    operation TEXT,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    status INTEGER,
    failure TEXT,
    duration_ms DOUBLE PRECISION NOT NULL,
    attempt INTEGER NOT NULL,
    rate_limited INTEGER NOT NULL,
    error_code TEXT,
    PRIMARY KEY (request_id, n)
  )`
})

/**
 * A preview of each webhook attempt's answer (issue #33, the dashboard's delivery page): the
 * receiver's response body, its first 2 KB at most, redacted (`WebhookDispatcher.previewOf`); null
 * when no answer came, and for attempts made before this migration. Never a request header, never
 * the signing secret.
 */
const webhookAttemptPreview = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_attempts ADD COLUMN response_preview TEXT`
})

/**
 * Single sign-on (OIDC, issue #33, ADR 0029): the e-mail domains an organisation claims (a
 * verified e-mail of that domain joins it with the mapping's role; a domain belongs to one
 * organisation at most), the identities linked to users (an issuer's subject, matched first at the
 * next sign-in), and the sign-ins under way (the `state`, stored as its SHA-256, with the `nonce`
 * and the PKCE verifier, for 10 minutes, taken once).
 */
const ssoSignIn = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const key = sql.onDialectOrElse({
    pg: () => sql.literal(`TEXT COLLATE "C"`),
    orElse: () => sql.literal("TEXT")
  })
  yield* sql`CREATE TABLE dashboard_sso_domains (
    domain ${key} PRIMARY KEY,
    organisation_id TEXT NOT NULL,
    role TEXT NOT NULL,
    created_by TEXT,
    created_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX dashboard_sso_domains_organisation ON dashboard_sso_domains (organisation_id)`
  yield* sql`CREATE TABLE dashboard_identities (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (issuer, subject)
  )`
  yield* sql`CREATE INDEX dashboard_identities_user ON dashboard_identities (user_id)`
  yield* sql`CREATE TABLE dashboard_sso_states (
    state_hash TEXT PRIMARY KEY,
    nonce TEXT NOT NULL,
    code_verifier TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
  )`
})

/**
 * An organisation's Connect defaults (issue #33, the dashboard's Connect page): the `client_name`
 * and `logo_url` a link token gets when `POST /v1/link/token/create` does not name its own, and
 * when they were last changed. Null: the organisation's name, no logo, never changed.
 */
const connectDefaults = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE organisations ADD COLUMN connect_client_name TEXT`
  yield* sql`ALTER TABLE organisations ADD COLUMN connect_logo_url TEXT`
  yield* sql`ALTER TABLE organisations ADD COLUMN connect_updated_at BIGINT`
})

/**
 * The webhook poller's claims (issue #35): a node polls a production connection only after it
 * claimed it until the end of the poll interval, so several nodes do not read the same lists.
 */
const pollClaims = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE poll_claims (
    connection_id TEXT PRIMARY KEY,
    claimed_until BIGINT NOT NULL
  )`
})

/**
 * On Postgres, the tables a request or a poll writes only to pace or to claim are `UNLOGGED`
 * (issue #35): the API's rate buckets (one upsert a request), the upstream governor's buckets (one
 * a provider request) and the webhook poller's claims. A transaction that writes only to them
 * commits without waiting for a WAL flush to disk. What is given up: after a crash of Postgres
 * (not a clean restart), and on a standby promoted after a failover, they are empty: every bucket
 * is full again and every claim gone, so callers may get one burst more and a connection may be
 * polled twice once. Nothing else is unlogged. SQLite has no such setting: nothing changes there.
 */
const unloggedBuckets = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function*() {
        yield* sql`ALTER TABLE rate_limit_buckets SET UNLOGGED`
        yield* sql`ALTER TABLE upstream_rate_buckets SET UNLOGGED`
        yield* sql`ALTER TABLE poll_claims SET UNLOGGED`
      }),
    orElse: () => Effect.void
  })
})

/**
 * The row generation on Postgres (issue #35, `RowCache.wrapChecked`, ADR 0030): a one-row table
 * `row_generation` whose `generation` a statement trigger on each table whose rows `RowCache` keeps
 * (`tokens`, `organisations`, `api_clients`, `connections`) moves on before every update, delete or
 * truncate (an upsert's update included), in the same transaction as the change, whoever makes it
 * (an API node, `npm run admin`, psql). Each node reads it once per request and uses its kept rows
 * only while it is unchanged. Inserts do not move it: `RowCache` never keeps a miss, so a new row
 * cannot make a kept one stale. The trigger updates the table of the changed table's own schema,
 * whatever the changing session's `search_path`. Before the statement, so that a writer takes the
 * generation's row lock before any row lock of the statement. SQLite needs none (`PRAGMA
 * data_version`). Written to apply where an earlier draft of this migration (notices, never on
 * main) left its function and triggers, too.
 */
const rowGeneration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function*() {
        yield* sql.unsafe(
          "CREATE TABLE IF NOT EXISTS row_generation (id INT PRIMARY KEY CHECK (id = 1), generation BIGINT NOT NULL)"
        )
        yield* sql.unsafe("INSERT INTO row_generation (id, generation) VALUES (1, 0) ON CONFLICT (id) DO NOTHING")
        yield* sql.unsafe(`CREATE OR REPLACE FUNCTION tracebridge_row_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('UPDATE %I.row_generation SET generation = generation + 1', TG_TABLE_SCHEMA);
  RETURN NULL;
END
$$`)
        for (const table of ["tokens", "organisations", "api_clients", "connections"]) {
          yield* sql.unsafe(`DROP TRIGGER IF EXISTS ${table}_changed ON ${table}`)
          yield* sql.unsafe(
            `CREATE TRIGGER ${table}_changed BEFORE UPDATE OR DELETE OR TRUNCATE ON ${table} ` +
              "FOR EACH STATEMENT EXECUTE FUNCTION tracebridge_row_changed()"
          )
        }
      }),
    orElse: () => Effect.void
  })
})

/**
 * One organisation's deliveries by status, with their times: the dashboard Overview reads its
 * webhook backlog from here on every load (`MetricsStore.organisationSnapshot`), instead of
 * scanning every organisation's deliveries.
 */
const deliveriesByOrganisation = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX webhook_deliveries_organisation ON webhook_deliveries (organisation_id, status, created_at)`
})

/**
 * Every migration, for the driver's migrator layer (`LibsqlMigrator.layer({ loader })`,
 * `PgMigrator.layer({ loader })`).
 *
 * @since 0.1.0
 * @category migrations
 */
export const loader: Migrator.Loader = Migrator.fromRecord({
  "0001_initial": initial,
  "0002_webhooks": webhooks,
  "0003_link_token_used": linkTokenUsed,
  "0004_idempotency_keys": idempotencyKeys,
  "0005_rate_limit_buckets": rateLimitBuckets,
  "0006_sandbox_versions": sandboxVersions,
  "0007_link_token_branding": linkTokenBranding,
  "0008_upstream_rate_buckets": upstreamRateBuckets,
  // the managed sync's store: its tables are the sync package's (`SyncStore.migration`)
  "0009_sync_store": SyncStore.migration,
  "0010_webhook_attempt_claims": webhookAttemptClaims,
  "0011_api_client_rotation": apiClientRotation,
  "0012_redirect_origins": redirectOrigins,
  "0013_webhook_event_trace_parent": webhookEventTraceParent,
  "0014_event_reads": eventReads,
  "0015_dashboard_accounts": dashboardAccounts,
  "0016_request_log": requestLog,
  "0017_webhook_attempt_preview": webhookAttemptPreview,
  "0018_sso_sign_in": ssoSignIn,
  "0019_connect_defaults": connectDefaults,
  "0020_row_generation": rowGeneration,
  "0021_poll_claims": pollClaims,
  "0022_unlogged_buckets": unloggedBuckets,
  "0023_deliveries_by_organisation": deliveriesByOrganisation
})
