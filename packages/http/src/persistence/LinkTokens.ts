/**
 * The tokens of the Link flow: link tokens (one per Connect session, single use) and the public
 * tokens they produce (exchanged once for a connection). Both are stored under their hash only.
 *
 * SQL over the `SqlClient` in context (SQLite or Postgres, migrated by `Database.ts`).
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer, Option, Schema } from "effect"

const { exec, one, rows } = SqlRow

/** @since 0.1.0 @category models */
export interface LinkToken {
  readonly hash: string
  readonly organisation_id: string
  readonly environment: "sandbox" | "production"
  /** JSON text of the link token request's metadata. */
  readonly metadata: string
  readonly redirect_uri: string | null
  readonly state: string | null
  readonly external_id: string | null
  /** Update mode: the connection whose login is re-entered. */
  readonly connection_id: string | null
  /** The name the Connect widget shows; null only on tokens stored before it was kept. */
  readonly client_name: string | null
  /** An https logo URL the Connect widget shows, if the request gave one. */
  readonly logo_url: string | null
  readonly expires_at: number
  readonly created_at: number
}

/** @since 0.1.0 @category models */
export interface PublicToken {
  readonly hash: string
  readonly organisation_id: string
  readonly connection_id: string
  readonly client_state: string | null
  readonly expires_at: number
  readonly created_at: number
  readonly used_at: number | null
}

/**
 * Link tokens and public tokens. Every method is atomic on its own; `Transactions` runs several
 * as one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly insertLinkToken: (t: LinkToken) => Effect.Effect<void>
  readonly getLinkToken: (hash: string) => Effect.Effect<Option.Option<LinkToken>>

  /** Whether a link token has produced a public token already (each is single use). */
  readonly linkTokenUsed: (hash: string) => Effect.Effect<boolean>
  /**
   * Claims a link token: marks it used in one conditional statement (`WHERE used_at IS NULL`);
   * false when it already was, so of concurrent uses exactly one gets true.
   */
  readonly useLinkToken: (hash: string, at: number) => Effect.Effect<boolean>
  /**
   * Gives back the claim `useLinkToken(hash, at)` took, when the link it was taken for stored
   * nothing (a refused login the user may retype): only that claim, never a later one.
   */
  readonly releaseLinkToken: (hash: string, at: number) => Effect.Effect<void>

  readonly insertPublicToken: (t: PublicToken) => Effect.Effect<void>
  readonly getPublicToken: (hash: string) => Effect.Effect<Option.Option<PublicToken>>
  /** Marks a public token used, only if unused and not expired at `at`; false otherwise. */
  readonly usePublicToken: (hash: string, at: number) => Effect.Effect<boolean>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class LinkTokens extends Context.Tag("Persistence/LinkTokens")<LinkTokens, Service>() {}

/** A `link_tokens` row (its `used_at` is read on its own: `linkTokenUsed`). */
const LinkTokenRow = Schema.Struct({
  hash: Schema.String,
  organisation_id: Schema.String,
  environment: Schema.Literal("sandbox", "production"),
  metadata: Schema.String,
  redirect_uri: Schema.NullOr(Schema.String),
  state: Schema.NullOr(Schema.String),
  external_id: Schema.NullOr(Schema.String),
  connection_id: Schema.NullOr(Schema.String),
  client_name: Schema.NullOr(Schema.String),
  logo_url: Schema.NullOr(Schema.String),
  expires_at: SqlRow.NumberFromColumn,
  created_at: SqlRow.NumberFromColumn
})
const toLinkToken: (row: unknown) => LinkToken = SqlRow.decoder(LinkTokenRow)

/** A `public_tokens` row. */
const PublicTokenRow = Schema.Struct({
  hash: Schema.String,
  organisation_id: Schema.String,
  connection_id: Schema.String,
  client_state: Schema.NullOr(Schema.String),
  expires_at: SqlRow.NumberFromColumn,
  created_at: SqlRow.NumberFromColumn,
  used_at: SqlRow.NumberOrNullFromColumn
})
const toPublicToken: (row: unknown) => PublicToken = SqlRow.decoder(PublicTokenRow)

const UsedAtRow = Schema.Struct({ used_at: SqlRow.NumberOrNullFromColumn })
const toUsedAt = SqlRow.decoder(UsedAtRow)

/**
 * The store over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => ({
    insertLinkToken: (t) => exec(sql`INSERT INTO link_tokens ${sql.insert({ ...t })}`),
    getLinkToken: (hash) => one(sql`SELECT * FROM link_tokens WHERE hash = ${hash}`, toLinkToken),

    insertPublicToken: (t) => exec(sql`INSERT INTO public_tokens ${sql.insert({ ...t })}`),
    getPublicToken: (hash) => one(sql`SELECT * FROM public_tokens WHERE hash = ${hash}`, toPublicToken),
    linkTokenUsed: (hash) =>
      Effect.map(
        one(sql`SELECT used_at FROM link_tokens WHERE hash = ${hash}`, toUsedAt),
        Option.exists((r) => r.used_at !== null)
      ),
    useLinkToken: (hash, at) =>
      Effect.map(
        rows(sql`UPDATE link_tokens SET used_at = ${at} WHERE hash = ${hash} AND used_at IS NULL RETURNING hash`),
        (rs) => rs.length === 1
      ),
    releaseLinkToken: (hash, at) =>
      exec(sql`UPDATE link_tokens SET used_at = NULL WHERE hash = ${hash} AND used_at = ${at}`),
    usePublicToken: (hash, at) =>
      Effect.map(
        rows(
          sql`UPDATE public_tokens SET used_at = ${at}
              WHERE hash = ${hash} AND used_at IS NULL AND expires_at > ${at}
              RETURNING hash`
        ),
        (rs) => rs.length === 1
      )
  })
)

/**
 * `LinkTokens` over the `SqlClient` in context (run the migrations first: `Database.ts` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<LinkTokens, never, SqlClient.SqlClient> = Layer.effect(LinkTokens, make)
