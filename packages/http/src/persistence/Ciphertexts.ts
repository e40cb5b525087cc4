/**
 * Every ciphertext the other stores hold, seen as one set for key rotation: connection logins,
 * webhook signing secrets and previous secrets, and the responses of completed idempotency keys.
 * It lists those not under the current key and replaces them one by one (compare-and-set), so
 * `KeyRotation` can re-encrypt while the service runs.
 *
 * SQL over the `SqlClient` in context (SQLite or Postgres, migrated by `Database.ts`), on the
 * `connections`, `webhook_endpoints` and `idempotency_keys` tables.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer, Schema } from "effect"

const { all, rows } = SqlRow

/**
 * Where a ciphertext is stored: a connection's provider login, a webhook endpoint's signing
 * secret or its previous secret, a completed idempotency key's response, or a dashboard user's TOTP
 * secret (issue #33).
 *
 * @since 0.1.0
 * @category models
 */
export type CiphertextColumn =
  | "connection.credentials"
  | "webhook.secret"
  | "webhook.previous_secret"
  | "idempotency.response"
  | "dashboard_user.totp_secret"

/**
 * One stored ciphertext with the id of the key it is under (for re-encryption).
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredCiphertext {
  readonly column: CiphertextColumn
  /** The connection's or endpoint's id; for a stored idempotent response, `{scope}/{idem_key}`. */
  readonly id: string
  readonly ciphertext: string
  /** Empty when the row has no key id (it cannot be decrypted). */
  readonly key_id: string
}

/**
 * The `StoredCiphertext.id` of a stored idempotent response: `{scope}/{idem_key}` (scopes are
 * organisation ids, which hold no `/`), and its two parts back.
 *
 * @since 0.1.0
 * @category models
 */
export const idempotencyRowId = {
  make: (scope: string, key: string): string => `${scope}/${key}`,
  scope: (id: string): string => id.slice(0, Math.max(0, id.indexOf("/"))),
  key: (id: string): string => id.slice(id.indexOf("/") + 1)
}

/**
 * The stored ciphertexts. Every method is atomic on its own; `Transactions` runs several as one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Every stored ciphertext not under `keyId`: connection logins, webhook secrets and previous
   * secrets, the responses of completed idempotency keys, and dashboard users' TOTP secrets.
   */
  readonly listCiphertexts: (exceptKeyId: string) => Effect.Effect<ReadonlyArray<StoredCiphertext>>
  /**
   * Replaces one ciphertext and its key id, only if the row still holds `old.ciphertext`
   * (compare-and-set); false otherwise.
   */
  readonly replaceCiphertext: (old: StoredCiphertext, ciphertext: string, keyId: string) => Effect.Effect<boolean>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Ciphertexts extends Context.Tag("Persistence/Ciphertexts")<Ciphertexts, Service>() {}

/** A ciphertext column's row: the row's id, the ciphertext, and its key id (null: none). */
const CiphertextRow = Schema.Struct({
  id: Schema.String,
  ciphertext: Schema.String,
  key_id: Schema.NullOr(Schema.String)
})
const toCiphertextRow = SqlRow.decoder(CiphertextRow)

/** A completed idempotency key's response. */
const ResponseRow = Schema.Struct({
  scope: Schema.String,
  idem_key: Schema.String,
  ciphertext: Schema.String,
  key_id: Schema.NullOr(Schema.String)
})
const toResponseRow = SqlRow.decoder(ResponseRow)

/**
 * The store over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => ({
    listCiphertexts: (exceptKeyId) =>
      Effect.map(
        Effect.all([
          all(
            sql`SELECT id, credentials AS ciphertext, key_id FROM connections
                WHERE credentials IS NOT NULL AND (key_id IS NULL OR key_id <> ${exceptKeyId}) ORDER BY id`,
            toCiphertextRow
          ),
          all(
            sql`SELECT id, secret AS ciphertext, key_id FROM webhook_endpoints
                WHERE key_id <> ${exceptKeyId} ORDER BY id`,
            toCiphertextRow
          ),
          all(
            sql`SELECT id, previous_secret AS ciphertext, previous_key_id AS key_id FROM webhook_endpoints
                WHERE previous_secret IS NOT NULL AND (previous_key_id IS NULL OR previous_key_id <> ${exceptKeyId})
                ORDER BY id`,
            toCiphertextRow
          ),
          all(
            sql`SELECT scope, idem_key, response AS ciphertext, key_id FROM idempotency_keys
                WHERE response IS NOT NULL AND (key_id IS NULL OR key_id <> ${exceptKeyId})
                ORDER BY scope, idem_key`,
            toResponseRow
          ),
          all(
            sql`SELECT id, totp_secret AS ciphertext, totp_key_id AS key_id FROM dashboard_users
                WHERE totp_secret IS NOT NULL AND (totp_key_id IS NULL OR totp_key_id <> ${exceptKeyId})
                ORDER BY id`,
            toCiphertextRow
          )
        ]),
        ([cs, ss, ps, is, ts]): ReadonlyArray<StoredCiphertext> => {
          const of = (column: CiphertextColumn) => (r: typeof CiphertextRow.Type): StoredCiphertext => ({
            column,
            id: r.id,
            ciphertext: r.ciphertext,
            key_id: r.key_id ?? ""
          })
          return [
            ...cs.map(of("connection.credentials")),
            ...ss.map(of("webhook.secret")),
            ...ps.map(of("webhook.previous_secret")),
            ...is.map((r) => ({
              column: "idempotency.response" as const,
              id: idempotencyRowId.make(r.scope, r.idem_key),
              ciphertext: r.ciphertext,
              key_id: r.key_id ?? ""
            })),
            ...ts.map(of("dashboard_user.totp_secret"))
          ]
        }
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
            : old.column === "dashboard_user.totp_secret"
            ? sql`UPDATE dashboard_users SET totp_secret = ${ciphertext}, totp_key_id = ${keyId}
                  WHERE id = ${old.id} AND totp_secret = ${old.ciphertext} RETURNING id`
            : sql`UPDATE idempotency_keys SET response = ${ciphertext}, key_id = ${keyId}
                  WHERE scope = ${idempotencyRowId.scope(old.id)} AND idem_key = ${
              idempotencyRowId.key(old.id)
            } AND response = ${old.ciphertext}
                  RETURNING scope`
        ),
        (rs) => rs.length === 1
      )
  })
)

/**
 * `Ciphertexts` over the `SqlClient` in context (run the migrations first: `Database.ts` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Ciphertexts, never, SqlClient.SqlClient> = Layer.effect(Ciphertexts, make)
