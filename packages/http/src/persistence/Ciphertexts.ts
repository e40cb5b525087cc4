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
import { Context, Effect, Layer } from "effect"
import { rows, str, strOrNull } from "./internal/sql.js"

/**
 * Where a ciphertext is stored: a connection's provider login, a webhook endpoint's signing
 * secret or its previous secret, or a completed idempotency key's response.
 *
 * @since 0.1.0
 * @category models
 */
export type CiphertextColumn =
  | "connection.credentials"
  | "webhook.secret"
  | "webhook.previous_secret"
  | "idempotency.response"

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
   * secrets, and the responses of completed idempotency keys.
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
