/**
 * The repository over `@effect/sql`, on SQLite (libsql) or Postgres. The SQL is portable; times are integers (epoch ms; BIGINT, which Postgres returns as
 * strings, so every number is converted on the way out) and flags are 0/1 integers, converted at
 * the edge. A `SqlError` is a defect here: the service's error channel stays `never`.
 *
 * The schema comes from `migrations.ts`; `Database.ts` picks the backend and runs them.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type {
  ApiClient,
  Connection,
  LinkToken,
  Organisation,
  Plan,
  PollSnapshot,
  PublicToken,
  SandboxChange,
  Service,
  StoredCiphertext,
  Token,
  TokenKind,
  WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEventRow
} from "./Repo.js"
import type { IdempotencyKey } from "./Repo.js"
import { idempotencyRowId, Repo } from "./Repo.js"

type Row = Record<string, unknown>

const num = (u: unknown): number => typeof u === "number" ? u : Number(u)
const numOrNull = (u: unknown): number | null => u === null || u === undefined ? null : num(u)
const str = (u: unknown): string => String(u)
const strOrNull = (u: unknown): string | null => u === null || u === undefined ? null : String(u)
const bool = (u: unknown): boolean => u === true || num(u) === 1
const flag = (b: boolean): number => b ? 1 : 0

const toIdempotencyKey = (r: Row): IdempotencyKey => ({
  scope: str(r.scope),
  idem_key: str(r.idem_key),
  fingerprint: str(r.fingerprint),
  state: str(r.state) as IdempotencyKey["state"],
  response: strOrNull(r.response),
  key_id: strOrNull(r.key_id),
  created_at: num(r.created_at),
  expires_at: num(r.expires_at)
})

const toOrganisation = (r: Row): Organisation => ({
  id: str(r.id),
  name: str(r.name),
  plan: str(r.plan) as Plan,
  created_at: num(r.created_at)
})

const toClient = (r: Row): ApiClient => ({
  id: str(r.id),
  organisation_id: str(r.organisation_id),
  secret_hash: str(r.secret_hash),
  created_at: num(r.created_at),
  revoked_at: numOrNull(r.revoked_at)
})

const toToken = (r: Row): Token => ({
  hash: str(r.hash),
  kind: str(r.kind) as TokenKind,
  organisation_id: str(r.organisation_id),
  client_id: strOrNull(r.client_id),
  connection_id: strOrNull(r.connection_id),
  family: strOrNull(r.family),
  scope: str(r.scope),
  expires_at: numOrNull(r.expires_at),
  created_at: num(r.created_at),
  used_at: numOrNull(r.used_at),
  revoked_at: numOrNull(r.revoked_at)
})

const toLinkToken = (r: Row): LinkToken => ({
  hash: str(r.hash),
  organisation_id: str(r.organisation_id),
  environment: str(r.environment) as LinkToken["environment"],
  metadata: str(r.metadata),
  redirect_uri: strOrNull(r.redirect_uri),
  state: strOrNull(r.state),
  external_id: strOrNull(r.external_id),
  connection_id: strOrNull(r.connection_id),
  expires_at: num(r.expires_at),
  created_at: num(r.created_at)
})

const toPublicToken = (r: Row): PublicToken => ({
  hash: str(r.hash),
  organisation_id: str(r.organisation_id),
  connection_id: str(r.connection_id),
  client_state: strOrNull(r.client_state),
  expires_at: num(r.expires_at),
  created_at: num(r.created_at),
  used_at: numOrNull(r.used_at)
})

const toConnection = (r: Row): Connection => ({
  id: str(r.id),
  organisation_id: str(r.organisation_id),
  provider: str(r.provider),
  state: str(r.state),
  status: str(r.status) as Connection["status"],
  is_sandbox: bool(r.is_sandbox),
  external_id: strOrNull(r.external_id),
  credentials: strOrNull(r.credentials),
  key_id: strOrNull(r.key_id),
  token_issued: bool(r.token_issued),
  created_at: num(r.created_at),
  updated_at: num(r.updated_at),
  sandbox_version: num(r.sandbox_version ?? 0),
  sandbox_fault: strOrNull(r.sandbox_fault)
})

const toSandboxChange = (r: Row): SandboxChange => ({
  connection_id: str(r.connection_id),
  seq: num(r.seq),
  change: str(r.change),
  created_at: num(r.created_at)
})

const toEndpoint = (r: Row): WebhookEndpoint => ({
  id: str(r.id),
  organisation_id: str(r.organisation_id),
  url: str(r.url),
  events: str(r.events),
  description: strOrNull(r.description),
  status: str(r.status) as WebhookEndpoint["status"],
  secret: str(r.secret),
  key_id: str(r.key_id),
  previous_secret: strOrNull(r.previous_secret),
  previous_key_id: strOrNull(r.previous_key_id),
  previous_expires_at: numOrNull(r.previous_expires_at),
  created_at: num(r.created_at),
  updated_at: num(r.updated_at)
})

const toEvent = (r: Row): WebhookEventRow => ({
  id: str(r.id),
  organisation_id: str(r.organisation_id),
  connection_id: str(r.connection_id),
  type: str(r.type),
  body: str(r.body),
  created_at: num(r.created_at)
})

const toDelivery = (r: Row): WebhookDelivery => ({
  id: str(r.id),
  organisation_id: str(r.organisation_id),
  endpoint_id: str(r.endpoint_id),
  event_id: str(r.event_id),
  event_type: str(r.event_type),
  status: str(r.status) as WebhookDelivery["status"],
  attempts: num(r.attempts),
  next_attempt_at: numOrNull(r.next_attempt_at),
  locked_until: numOrNull(r.locked_until),
  created_at: num(r.created_at),
  updated_at: num(r.updated_at)
})

const toAttempt = (r: Row): WebhookAttempt => ({
  delivery_id: str(r.delivery_id),
  n: num(r.n),
  at: num(r.at),
  status_code: numOrNull(r.status_code),
  error: strOrNull(r.error),
  duration_ms: num(r.duration_ms)
})

const toSnapshot = (r: Row): PollSnapshot => ({
  connection_id: str(r.connection_id),
  snapshot: str(r.snapshot),
  polled_at: num(r.polled_at)
})

/** Carries the caller's own failure through `withTransaction`, apart from the driver's `SqlError`. */
class TransactionFailure<E> {
  constructor(readonly error: E) {}
}

/**
 * The repository over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const rows = (statement: Effect.Effect<ReadonlyArray<Row>, SqlError.SqlError>) => Effect.orDie(statement)
  const one = <A>(statement: Effect.Effect<ReadonlyArray<Row>, SqlError.SqlError>, to: (r: Row) => A) =>
    Effect.map(rows(statement), (rs) => Option.map(Option.fromNullable(rs[0]), to))
  const exec = (statement: Effect.Effect<unknown, SqlError.SqlError>) => Effect.asVoid(Effect.orDie(statement))

  const service: Service = {
    insertOrganisation: (o) => exec(sql`INSERT INTO organisations ${sql.insert({ ...o })}`),
    getOrganisation: (id) => one(sql`SELECT * FROM organisations WHERE id = ${id}`, toOrganisation),
    listOrganisations: () =>
      Effect.map(rows(sql`SELECT * FROM organisations ORDER BY created_at, id`), (rs) => rs.map(toOrganisation)),
    setPlan: (id, plan) =>
      Effect.map(
        rows(sql`UPDATE organisations SET plan = ${plan} WHERE id = ${id} RETURNING id`),
        (rs) => rs.length > 0
      ),

    insertClient: (c) => exec(sql`INSERT INTO api_clients ${sql.insert({ ...c })}`),
    getClient: (id) => one(sql`SELECT * FROM api_clients WHERE id = ${id}`, toClient),

    insertToken: (t) => exec(sql`INSERT INTO tokens ${sql.insert({ ...t })}`),
    getToken: (hash) => one(sql`SELECT * FROM tokens WHERE hash = ${hash}`, toToken),
    // Compare-and-set in one statement: of two concurrent uses, only one sees `used_at IS NULL`.
    useToken: (hash, at) =>
      Effect.map(
        rows(sql`UPDATE tokens SET used_at = ${at} WHERE hash = ${hash} AND used_at IS NULL RETURNING hash`),
        (rs) => rs.length === 1
      ),
    revokeFamily: (family, at) =>
      exec(sql`UPDATE tokens SET revoked_at = ${at} WHERE family = ${family} AND revoked_at IS NULL`),
    revokeConnectionTokens: (connectionId, at) =>
      exec(sql`UPDATE tokens SET revoked_at = ${at} WHERE connection_id = ${connectionId} AND revoked_at IS NULL`),

    insertLinkToken: (t) => exec(sql`INSERT INTO link_tokens ${sql.insert({ ...t })}`),
    getLinkToken: (hash) => one(sql`SELECT * FROM link_tokens WHERE hash = ${hash}`, toLinkToken),

    insertPublicToken: (t) => exec(sql`INSERT INTO public_tokens ${sql.insert({ ...t })}`),
    getPublicToken: (hash) => one(sql`SELECT * FROM public_tokens WHERE hash = ${hash}`, toPublicToken),
    linkTokenUsed: (hash) =>
      Effect.map(
        rows(sql`SELECT used_at FROM link_tokens WHERE hash = ${hash}`),
        (rs) => rs.length === 1 && rs[0]!.used_at !== null && rs[0]!.used_at !== undefined
      ),
    useLinkToken: (hash, at) =>
      Effect.map(
        rows(sql`UPDATE link_tokens SET used_at = ${at} WHERE hash = ${hash} AND used_at IS NULL RETURNING hash`),
        (rs) => rs.length === 1
      ),
    usePublicToken: (hash, at) =>
      Effect.map(
        rows(
          sql`UPDATE public_tokens SET used_at = ${at}
              WHERE hash = ${hash} AND used_at IS NULL AND expires_at > ${at}
              RETURNING hash`
        ),
        (rs) => rs.length === 1
      ),

    insertConnection: (c) =>
      exec(
        sql`INSERT INTO connections ${
          sql.insert({ ...c, is_sandbox: flag(c.is_sandbox), token_issued: flag(c.token_issued) })
        }`
      ),
    getConnection: (id) => one(sql`SELECT * FROM connections WHERE id = ${id}`, toConnection),
    listConnections: (organisationId, offset, limit) =>
      Effect.all({
        items: Effect.map(
          rows(
            sql`SELECT * FROM connections WHERE organisation_id = ${organisationId}
                ORDER BY created_at, id LIMIT ${Math.max(0, limit)} OFFSET ${Math.max(0, offset)}`
          ),
          (rs) => rs.map(toConnection)
        ),
        total: Effect.map(
          rows(sql`SELECT COUNT(*) AS n FROM connections WHERE organisation_id = ${organisationId}`),
          (rs) => num(rs[0]?.n ?? 0)
        )
      }),
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

    sandboxLog: (connectionId, after) =>
      // One statement, so one snapshot: the version, the fault and the changes agree.
      Effect.map(
        rows(
          sql`SELECT c.sandbox_version, c.sandbox_fault, s.seq, s.change, s.created_at
              FROM connections c
              LEFT JOIN sandbox_changes s
                ON s.connection_id = c.id AND s.seq > ${after} AND s.seq <= c.sandbox_version
              WHERE c.id = ${connectionId}
              ORDER BY s.seq`
        ),
        (rs) =>
          rs.length === 0 ? Option.none() : Option.some({
            version: num(rs[0]!.sandbox_version),
            fault: strOrNull(rs[0]!.sandbox_fault),
            changes: rs.filter((r) => r.seq !== null && r.seq !== undefined).map((r) =>
              toSandboxChange({ ...r, connection_id: connectionId })
            )
          })
      ),
    appendSandboxChanges: (connectionId, expected, changes) =>
      changes.length === 0 ? Effect.succeed(true) : service.transaction(Effect.gen(function*() {
        // The row lock of this update serialises writers; one that read an older version matches no row.
        const moved = yield* rows(
          sql`UPDATE connections SET sandbox_version = ${expected + changes.length}
              WHERE id = ${connectionId} AND sandbox_version = ${expected} RETURNING id`
        )
        if (moved.length === 0) return false
        yield* exec(sql`INSERT INTO sandbox_changes ${
          sql.insert(changes.map((c, i) => ({
            connection_id: connectionId,
            seq: expected + 1 + i,
            change: c.change,
            created_at: c.created_at
          })))
        }`)
        return true
      })),
    setSandboxFault: (connectionId, fault) =>
      exec(sql`UPDATE connections SET sandbox_fault = ${fault} WHERE id = ${connectionId}`),
    resetSandbox: (connectionId) =>
      service.transaction(Effect.gen(function*() {
        yield* exec(
          sql`UPDATE connections SET sandbox_version = sandbox_version + 1, sandbox_fault = ${null}
              WHERE id = ${connectionId}`
        )
        yield* exec(sql`DELETE FROM sandbox_changes WHERE connection_id = ${connectionId}`)
      })),

    insertWebhookEndpoint: (e) => exec(sql`INSERT INTO webhook_endpoints ${sql.insert({ ...e })}`),
    getWebhookEndpoint: (id) => one(sql`SELECT * FROM webhook_endpoints WHERE id = ${id}`, toEndpoint),
    listWebhookEndpoints: (organisationId) =>
      Effect.map(
        rows(sql`SELECT * FROM webhook_endpoints WHERE organisation_id = ${organisationId} ORDER BY created_at, id`),
        (rs) => rs.map(toEndpoint)
      ),
    updateWebhookEndpoint: (id, patch) => {
      const set: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(patch)) if (v !== undefined) set[k] = v
      return Object.keys(set).length === 0
        ? Effect.void
        : exec(sql`UPDATE webhook_endpoints SET ${sql.update(set)} WHERE id = ${id}`)
    },
    deleteWebhookEndpoint: (id) =>
      service.transaction(Effect.gen(function*() {
        yield* exec(
          sql`DELETE FROM webhook_attempts WHERE delivery_id IN
              (SELECT id FROM webhook_deliveries WHERE endpoint_id = ${id})`
        )
        yield* exec(sql`DELETE FROM webhook_deliveries WHERE endpoint_id = ${id}`)
        yield* exec(sql`DELETE FROM webhook_endpoints WHERE id = ${id}`)
      })),
    insertWebhookEvent: (event, deliveries) =>
      service.transaction(Effect.gen(function*() {
        yield* exec(sql`INSERT INTO webhook_events ${sql.insert({ ...event })}`)
        if (deliveries.length > 0) {
          yield* exec(sql`INSERT INTO webhook_deliveries ${sql.insert(deliveries.map((d) => ({ ...d })))}`)
        }
      })),
    getWebhookEvent: (id) => one(sql`SELECT * FROM webhook_events WHERE id = ${id}`, toEvent),
    getWebhookDelivery: (id) => one(sql`SELECT * FROM webhook_deliveries WHERE id = ${id}`, toDelivery),
    listWebhookDeliveries: (endpointId, offset, limit) =>
      Effect.all({
        items: Effect.map(
          rows(
            sql`SELECT * FROM webhook_deliveries WHERE endpoint_id = ${endpointId}
                ORDER BY created_at DESC, id DESC LIMIT ${Math.max(0, limit)} OFFSET ${Math.max(0, offset)}`
          ),
          (rs) => rs.map(toDelivery)
        ),
        total: Effect.map(
          rows(sql`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`),
          (rs) => num(rs[0]?.n ?? 0)
        )
      }),
    listWebhookAttempts: (ids) =>
      ids.length === 0
        ? Effect.succeed([])
        : Effect.map(
          rows(sql`SELECT * FROM webhook_attempts WHERE ${sql.in("delivery_id", ids)} ORDER BY delivery_id, n`),
          (rs) => rs.map(toAttempt)
        ),
    // One statement: the CTE picks due rows once (Postgres materialises a locking CTE; a plain
    // IN (subquery … LIMIT) may be re-run and claim more than the limit); on Postgres it locks
    // them and skips rows another claim holds (FOR UPDATE SKIP LOCKED), and the outer WHERE
    // re-checks the claim after any wait. SQLite runs one writer at a time, so the statement
    // alone is atomic there.
    claimWebhookDeliveries: (now, lockedUntil, limit) => {
      const lock = sql.onDialectOrElse({
        pg: () => sql.literal("FOR UPDATE SKIP LOCKED"),
        orElse: () => sql.literal("")
      })
      return Effect.map(
        rows(
          sql`WITH due AS (
                SELECT id FROM webhook_deliveries
                WHERE status = 'pending' AND next_attempt_at <= ${now}
                  AND (locked_until IS NULL OR locked_until <= ${now})
                ORDER BY next_attempt_at, id
                LIMIT ${Math.max(0, limit)}
                ${lock}
              )
              UPDATE webhook_deliveries SET locked_until = ${lockedUntil}
              WHERE id IN (SELECT id FROM due)
                AND status = 'pending' AND (locked_until IS NULL OR locked_until <= ${now})
              RETURNING *`
        ),
        (rs) => rs.map(toDelivery).sort((a, b) => a.next_attempt_at! - b.next_attempt_at! || a.id.localeCompare(b.id))
      )
    },
    recordWebhookAttempt: (attempt, next) =>
      service.transaction(Effect.gen(function*() {
        const moved = yield* rows(
          sql`UPDATE webhook_deliveries
              SET attempts = ${attempt.n}, status = ${next.status}, next_attempt_at = ${next.next_attempt_at},
                  locked_until = NULL, updated_at = ${attempt.at}
              WHERE id = ${attempt.delivery_id} AND attempts = ${attempt.n - 1}
              RETURNING id`
        )
        if (moved.length !== 1) return false
        yield* exec(sql`INSERT INTO webhook_attempts ${sql.insert({ ...attempt })}`)
        return true
      })),
    retryWebhookDelivery: (id, now) =>
      exec(
        sql`UPDATE webhook_deliveries
            SET status = 'pending', next_attempt_at = ${now}, locked_until = NULL, updated_at = ${now}
            WHERE id = ${id}`
      ),
    getPollSnapshot: (connectionId) =>
      one(sql`SELECT * FROM poll_snapshots WHERE connection_id = ${connectionId}`, toSnapshot),
    putPollSnapshot: (s) =>
      exec(
        sql`INSERT INTO poll_snapshots ${sql.insert({ ...s })}
            ON CONFLICT (connection_id) DO UPDATE SET snapshot = ${s.snapshot}, polled_at = ${s.polled_at}`
      ),

    listCiphertexts: (exceptKeyId) =>
      Effect.map(
        Effect.all([
          rows(
            sql`SELECT id, credentials, key_id FROM connections
                WHERE credentials IS NOT NULL AND (key_id IS NULL OR key_id <> ${exceptKeyId}) ORDER BY id`
          ),
          rows(sql`SELECT id, secret, key_id FROM webhook_endpoints WHERE key_id <> ${exceptKeyId} ORDER BY id`),
          rows(
            sql`SELECT id, previous_secret, previous_key_id FROM webhook_endpoints
                WHERE previous_secret IS NOT NULL AND (previous_key_id IS NULL OR previous_key_id <> ${exceptKeyId})
                ORDER BY id`
          ),
          rows(
            sql`SELECT scope, idem_key, response, key_id FROM idempotency_keys
                WHERE response IS NOT NULL AND (key_id IS NULL OR key_id <> ${exceptKeyId})
                ORDER BY scope, idem_key`
          )
        ]),
        ([cs, ss, ps, is]): ReadonlyArray<StoredCiphertext> => [
          ...cs.map((r) => ({
            column: "connection.credentials" as const,
            id: str(r.id),
            ciphertext: str(r.credentials),
            key_id: strOrNull(r.key_id) ?? ""
          })),
          ...ss.map((r) => ({
            column: "webhook.secret" as const,
            id: str(r.id),
            ciphertext: str(r.secret),
            key_id: str(r.key_id)
          })),
          ...ps.map((r) => ({
            column: "webhook.previous_secret" as const,
            id: str(r.id),
            ciphertext: str(r.previous_secret),
            key_id: strOrNull(r.previous_key_id) ?? ""
          })),
          ...is.map((r) => ({
            column: "idempotency.response" as const,
            id: idempotencyRowId.make(str(r.scope), str(r.idem_key)),
            ciphertext: str(r.response),
            key_id: strOrNull(r.key_id) ?? ""
          }))
        ]
      ),
    replaceCiphertext: (old, ciphertext, keyId) =>
      Effect.map(
        rows(
          old.column === "connection.credentials"
            ? sql`UPDATE connections SET credentials = ${ciphertext}, key_id = ${keyId}
                  WHERE id = ${old.id} AND credentials = ${old.ciphertext} RETURNING id`
            : old.column === "webhook.secret"
            ? sql`UPDATE webhook_endpoints SET secret = ${ciphertext}, key_id = ${keyId}
                  WHERE id = ${old.id} AND secret = ${old.ciphertext} RETURNING id`
            : old.column === "webhook.previous_secret"
            ? sql`UPDATE webhook_endpoints SET previous_secret = ${ciphertext}, previous_key_id = ${keyId}
                  WHERE id = ${old.id} AND previous_secret = ${old.ciphertext} RETURNING id`
            : sql`UPDATE idempotency_keys SET response = ${ciphertext}, key_id = ${keyId}
                  WHERE scope = ${idempotencyRowId.scope(old.id)} AND idem_key = ${
              idempotencyRowId.key(old.id)
            } AND response = ${old.ciphertext}
                  RETURNING scope`
        ),
        (rs) => rs.length === 1
      ),

    // The caller's failures roll back and come out as they were; the driver's become defects.
    // The primary key (scope, idem_key) decides between concurrent claims on SQLite and Postgres alike.
    claimIdempotencyKey: (k) =>
      Effect.zipRight(
        exec(sql`DELETE FROM idempotency_keys WHERE expires_at <= ${k.created_at}`),
        Effect.map(
          rows(sql`INSERT INTO idempotency_keys ${sql.insert({ ...k })} ON CONFLICT DO NOTHING RETURNING scope`),
          (rs) => rs.length === 1
        )
      ),
    getIdempotencyKey: (scope, key, now) =>
      one(
        sql`SELECT * FROM idempotency_keys WHERE scope = ${scope} AND idem_key = ${key} AND expires_at > ${now}`,
        toIdempotencyKey
      ),
    completeIdempotencyKey: (scope, key, response, keyId) =>
      exec(
        sql`UPDATE idempotency_keys SET state = 'completed', response = ${response}, key_id = ${keyId}
            WHERE scope = ${scope} AND idem_key = ${key} AND state = 'in_progress'`
      ),
    releaseIdempotencyKey: (scope, key) =>
      exec(sql`DELETE FROM idempotency_keys WHERE scope = ${scope} AND idem_key = ${key} AND state = 'in_progress'`),
    // One statement: the refill is computed from the stored row and the caller's `now` (Effect's
    // Clock, never the database's). On Postgres, ON CONFLICT DO UPDATE locks the row and evaluates
    // the SET on its latest version, so concurrent takes on one key queue up and each sees the
    // previous one's result; SQLite runs one writer at a time. `allowed` records whether this
    // statement took a token (RETURNING sees only the new row). The stored row is named by its
    // table: on Postgres a bare `tokens` is ambiguous with EXCLUDED's.
    takeRateToken: (key, { burst, now, rate }) => {
      const least = sql.onDialectOrElse({ pg: () => sql.literal("LEAST"), orElse: () => sql.literal("MIN") })
      const greatest = sql.onDialectOrElse({ pg: () => sql.literal("GREATEST"), orElse: () => sql.literal("MAX") })
      const at = sql`CAST(${now} AS BIGINT)`
      const refilled = sql`${least}(
        CAST(${burst} AS DOUBLE PRECISION),
        rate_limit_buckets.tokens
          + ${greatest}(0, ${at} - rate_limit_buckets.updated_at) * CAST(${rate} AS DOUBLE PRECISION) / 1000.0
      )`
      return Effect.map(
        rows(
          sql`INSERT INTO rate_limit_buckets (key, tokens, allowed, updated_at)
              VALUES (${key}, ${burst - 1}, 1, ${now})
              ON CONFLICT (key) DO UPDATE SET
                tokens = CASE WHEN ${refilled} >= 1 THEN ${refilled} - 1 ELSE ${refilled} END,
                allowed = CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END,
                updated_at = ${greatest}(rate_limit_buckets.updated_at, ${at})
              RETURNING tokens, allowed`
        ),
        (rs) => ({ allowed: bool(rs[0]?.allowed), tokens: num(rs[0]?.tokens) })
      )
    },
    dropRateBuckets: (before) => exec(sql`DELETE FROM rate_limit_buckets WHERE updated_at < ${before}`),
    transaction: <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      sql.withTransaction(Effect.mapError(effect, (e) => new TransactionFailure(e))).pipe(
        Effect.catchAll((e) => e instanceof TransactionFailure ? Effect.fail(e.error as E) : Effect.die(e))
      )
  }
  return service
})

/**
 * `Repo` over the `SqlClient` in context (run the migrations first: `Database.ts` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Repo, never, SqlClient.SqlClient> = Layer.effect(Repo, make)
