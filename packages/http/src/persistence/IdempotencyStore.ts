/**
 * The claimed `Idempotency-Key`s, scoped per organisation: the request's fingerprint while the
 * first request runs, then its response (encrypted) until the key expires. Expired rows are swept
 * lazily, by the next claim. `Idempotency.ts` is the middleware that uses them.
 *
 * SQL over the `SqlClient` in context (SQLite or Postgres, migrated by `Database.ts`).
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer, Schema } from "effect"
import type { Option } from "effect"

const { exec, one, rows } = SqlRow

/**
 * One claimed `Idempotency-Key` (scoped per organisation). `in_progress` while the first request
 * runs; `completed` with its response (encrypted: `response` is a ciphertext under `key_id`).
 *
 * @since 0.1.0
 * @category models
 */
export interface IdempotencyKey {
  readonly scope: string
  readonly idem_key: string
  /** SHA-256 (hex) of method, path and body. */
  readonly fingerprint: string
  readonly state: "in_progress" | "completed"
  readonly response: string | null
  readonly key_id: string | null
  readonly created_at: number
  readonly expires_at: number
}

/**
 * The idempotency keys. Every method is atomic on its own; `Transactions` runs several as one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Claims a key: drops expired rows (`expires_at <= k.created_at`, swept lazily here), then
   * inserts `k`; false when a live row holds the key (the primary key decides between concurrent
   * claims).
   */
  readonly claimIdempotencyKey: (k: IdempotencyKey) => Effect.Effect<boolean>
  /** The live (unexpired at `now`) row of a key. */
  readonly getIdempotencyKey: (scope: string, key: string, now: number) => Effect.Effect<Option.Option<IdempotencyKey>>
  /** Stores the response of an `in_progress` key and marks it `completed`. */
  readonly completeIdempotencyKey: (
    scope: string,
    key: string,
    response: string,
    keyId: string
  ) => Effect.Effect<void>
  /** Drops an `in_progress` key (its request failed with a 5xx or was interrupted), so a retry can run. */
  readonly releaseIdempotencyKey: (scope: string, key: string) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class IdempotencyStore extends Context.Tag("Persistence/IdempotencyStore")<IdempotencyStore, Service>() {}

/** An `idempotency_keys` row. */
const IdempotencyKeyRow = Schema.Struct({
  scope: Schema.String,
  idem_key: Schema.String,
  fingerprint: Schema.String,
  state: Schema.Literal("in_progress", "completed"),
  response: Schema.NullOr(Schema.String),
  key_id: Schema.NullOr(Schema.String),
  created_at: SqlRow.NumberFromColumn,
  expires_at: SqlRow.NumberFromColumn
})
const toIdempotencyKey: (row: unknown) => IdempotencyKey = SqlRow.decoder(IdempotencyKeyRow)

/**
 * The store over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => ({
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
      exec(sql`DELETE FROM idempotency_keys WHERE scope = ${scope} AND idem_key = ${key} AND state = 'in_progress'`)
  })
)

/**
 * `IdempotencyStore` over the `SqlClient` in context (run the migrations first: `Database.ts` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<IdempotencyStore, never, SqlClient.SqlClient> = Layer.effect(IdempotencyStore, make)
