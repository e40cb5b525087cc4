/**
 * The bearer tokens the service issues: access and refresh tokens (a refresh chain shares a
 * family) and connection tokens. Tokens never reach the store in plain text: each is stored under
 * its hash.
 *
 * SQL over the `SqlClient` in context (SQLite or Postgres, migrated by `Database.ts`). On SQLite,
 * `Database.layerSqlite` puts `getToken` behind `RowCache`.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer, Schema } from "effect"
import type { Option } from "effect"

const { exec, one, rows } = SqlRow

/** @since 0.1.0 @category models */
export type TokenKind = "access" | "refresh" | "connection"

/** @since 0.1.0 @category models */
export interface Token {
  readonly hash: string
  readonly kind: TokenKind
  readonly organisation_id: string
  readonly client_id: string | null
  readonly connection_id: string | null
  /** Refresh tokens of one chain share a family; reuse of a spent one revokes the family. */
  readonly family: string | null
  readonly scope: string
  readonly expires_at: number | null
  readonly created_at: number
  readonly used_at: number | null
  readonly revoked_at: number | null
}

/**
 * Access, refresh and connection tokens. Every method is atomic on its own; `Transactions` runs
 * several as one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly insertToken: (t: Token) => Effect.Effect<void>
  readonly getToken: (hash: string) => Effect.Effect<Option.Option<Token>>
  /** Marks a refresh token used, only if it was unused; false when it was already used (reuse). */
  readonly useToken: (hash: string, at: number) => Effect.Effect<boolean>
  readonly revokeFamily: (family: string, at: number) => Effect.Effect<void>
  readonly revokeConnectionTokens: (connectionId: string, at: number) => Effect.Effect<void>
  /** Revokes every access and refresh token issued to an API client. */
  readonly revokeClientTokens: (clientId: string, at: number) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Tokens extends Context.Tag("Persistence/Tokens")<Tokens, Service>() {}

/** A `tokens` row. */
const TokenRow = Schema.Struct({
  hash: Schema.String,
  kind: Schema.Literal("access", "refresh", "connection"),
  organisation_id: Schema.String,
  client_id: Schema.NullOr(Schema.String),
  connection_id: Schema.NullOr(Schema.String),
  family: Schema.NullOr(Schema.String),
  scope: Schema.String,
  expires_at: SqlRow.NumberOrNullFromColumn,
  created_at: SqlRow.NumberFromColumn,
  used_at: SqlRow.NumberOrNullFromColumn,
  revoked_at: SqlRow.NumberOrNullFromColumn
})
const toToken: (row: unknown) => Token = SqlRow.decoder(TokenRow)

/**
 * The store over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => ({
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
    revokeClientTokens: (clientId, at) =>
      exec(sql`UPDATE tokens SET revoked_at = ${at} WHERE client_id = ${clientId} AND revoked_at IS NULL`)
  })
)

/**
 * `Tokens` over the `SqlClient` in context (run the migrations first: `Database.ts` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Tokens, never, SqlClient.SqlClient> = Layer.effect(Tokens, make)
