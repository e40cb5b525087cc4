/**
 * Who uses the service: organisations (with their plan) and their API clients. A client's secret
 * never reaches the store in plain text: it arrives as a hash.
 *
 * SQL over the `SqlClient` in context (SQLite or Postgres, migrated by `Database.ts`). On SQLite,
 * `Database.layerSqlite` puts `getOrganisation` behind `RowCache`.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer, Option, Schema } from "effect"

const { all, exec, one, rows } = SqlRow

/** @since 0.1.0 @category models */
export const Plan = Schema.Literal("sandbox", "production")
/** @since 0.1.0 @category models */
export type Plan = typeof Plan.Type

/** @since 0.1.0 @category models */
export interface Organisation {
  readonly id: string
  readonly name: string
  readonly plan: Plan
  readonly created_at: number
  /**
   * The origins a link token's `redirect_uri` may point to (issue #28, ADR 0019); empty or absent:
   * any origin the plan allows. They may also frame the Connect page.
   */
  readonly redirect_origins?: ReadonlyArray<string>
  /**
   * Its Connect defaults (the dashboard's Connect page, migration 0019): the `client_name` and
   * `logo_url` of a link token that names none; absent: the organisation's name, no logo.
   */
  readonly connect_client_name?: string
  readonly connect_logo_url?: string
  /** When the Connect defaults were last changed; absent: never. */
  readonly connect_updated_at?: number
}

/**
 * An organisation's Connect defaults (null: none).
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectDefaults {
  readonly client_name: string | null
  readonly logo_url: string | null
}

/** @since 0.1.0 @category models */
export interface ApiClient {
  readonly id: string
  readonly organisation_id: string
  readonly secret_hash: string
  readonly created_at: number
  readonly revoked_at: number | null
  /**
   * After `rotate-client`: the replaced secret's hash, which still authenticates the client until
   * `previous_secret_expires_at` (absent on a client never rotated).
   */
  readonly previous_secret_hash?: string
  readonly previous_secret_expires_at?: number
  /** The dashboard user who made it (issue #33); absent when the CLI or the first start did. */
  readonly created_by?: string
  /** When a token was last issued for it (the token endpoint); absent when never. */
  readonly last_used_at?: number
}

/**
 * Organisations and API clients. Every method is atomic on its own; `Transactions` runs several
 * as one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly insertOrganisation: (o: Organisation) => Effect.Effect<void>
  readonly getOrganisation: (id: string) => Effect.Effect<Option.Option<Organisation>>
  readonly listOrganisations: () => Effect.Effect<ReadonlyArray<Organisation>>
  readonly setPlan: (id: string, plan: Plan) => Effect.Effect<boolean>
  /** Replaces an organisation's allowed redirect origins (empty: none); false when it is unknown. */
  readonly setRedirectOrigins: (id: string, origins: ReadonlyArray<string>) => Effect.Effect<boolean>
  /** Replaces an organisation's Connect defaults (null: none); false when it is unknown. */
  readonly setConnectDefaults: (id: string, defaults: ConnectDefaults, at: number) => Effect.Effect<boolean>

  readonly insertClient: (c: ApiClient) => Effect.Effect<void>
  readonly getClient: (id: string) => Effect.Effect<Option.Option<ApiClient>>
  /** An organisation's clients, oldest first (revoked ones too). */
  readonly listClients: (organisationId: string) => Effect.Effect<ReadonlyArray<ApiClient>>
  /** Records that a token was issued for the client now (`last_used_at`). */
  readonly touchClient: (id: string, at: number) => Effect.Effect<void>
  /** Sets a client's `revoked_at` (kept if already set); false when there is no such client. */
  readonly revokeClient: (id: string, at: number) => Effect.Effect<boolean>
  /**
   * Replaces an unrevoked client's secret hash in one statement; the replaced one is kept as the
   * previous secret until `previousExpiresAt` (a previous secret of an earlier rotation is
   * dropped). False when there is no such unrevoked client.
   */
  readonly rotateClient: (id: string, secretHash: string, previousExpiresAt: number) => Effect.Effect<boolean>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Accounts extends Context.Tag("Persistence/Accounts")<Accounts, Service>() {}

/** An `organisations` row. */
const OrganisationRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  plan: Plan,
  created_at: SqlRow.NumberFromColumn,
  // a JSON array, or null for none; present only when the organisation has some
  redirect_origins: Schema.optionalToOptional(
    Schema.NullOr(SqlRow.JsonColumn(Schema.Array(Schema.String))),
    Schema.Array(Schema.String),
    {
      decode: Option.filter((origins): origins is ReadonlyArray<string> => origins !== null && origins.length > 0),
      encode: (origins) => origins
    }
  ),
  connect_client_name: SqlRow.OptionalFromNull(Schema.String),
  connect_logo_url: SqlRow.OptionalFromNull(Schema.String),
  connect_updated_at: SqlRow.OptionalFromNull(SqlRow.NumberFromColumn)
})
const toOrganisation: (row: unknown) => Organisation = SqlRow.decoder(OrganisationRow)

/** An `api_clients` row; the previous secret is present only on a client rotated. */
const ClientRow = Schema.Struct({
  id: Schema.String,
  organisation_id: Schema.String,
  secret_hash: Schema.String,
  created_at: SqlRow.NumberFromColumn,
  revoked_at: SqlRow.NumberOrNullFromColumn,
  previous_secret_hash: SqlRow.OptionalFromNull(Schema.String),
  previous_secret_expires_at: SqlRow.OptionalFromNull(SqlRow.NumberFromColumn),
  created_by: SqlRow.OptionalFromNull(Schema.String),
  last_used_at: SqlRow.OptionalFromNull(SqlRow.NumberFromColumn)
})
const toClient: (row: unknown) => ApiClient = SqlRow.decoder(ClientRow)

/**
 * The store over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => ({
    insertOrganisation: ({ redirect_origins, ...o }) =>
      exec(
        sql`INSERT INTO organisations ${
          sql.insert({
            ...o,
            redirect_origins: redirect_origins && redirect_origins.length > 0 ? JSON.stringify(redirect_origins) : null
          })
        }`
      ),
    getOrganisation: (id) => one(sql`SELECT * FROM organisations WHERE id = ${id}`, toOrganisation),
    listOrganisations: () => all(sql`SELECT * FROM organisations ORDER BY created_at, id`, toOrganisation),
    setPlan: (id, plan) =>
      Effect.map(
        rows(sql`UPDATE organisations SET plan = ${plan} WHERE id = ${id} RETURNING id`),
        (rs) => rs.length > 0
      ),
    setRedirectOrigins: (id, origins) =>
      Effect.map(
        rows(
          sql`UPDATE organisations SET redirect_origins = ${
            origins.length > 0 ? JSON.stringify([...new Set(origins)]) : null
          } WHERE id = ${id} RETURNING id`
        ),
        (rs) => rs.length > 0
      ),

    setConnectDefaults: (id, defaults, at) =>
      Effect.map(
        rows(
          sql`UPDATE organisations
              SET connect_client_name = ${defaults.client_name},
                  connect_logo_url = ${defaults.logo_url},
                  connect_updated_at = ${at}
              WHERE id = ${id} RETURNING id`
        ),
        (rs) => rs.length > 0
      ),

    insertClient: (c) => exec(sql`INSERT INTO api_clients ${sql.insert({ ...c })}`),
    getClient: (id) => one(sql`SELECT * FROM api_clients WHERE id = ${id}`, toClient),
    listClients: (organisationId) =>
      all(sql`SELECT * FROM api_clients WHERE organisation_id = ${organisationId} ORDER BY created_at, id`, toClient),
    touchClient: (id, at) => exec(sql`UPDATE api_clients SET last_used_at = ${at} WHERE id = ${id}`),
    revokeClient: (id, at) =>
      Effect.map(
        rows(sql`UPDATE api_clients SET revoked_at = COALESCE(revoked_at, ${at}) WHERE id = ${id} RETURNING id`),
        (rs) => rs.length > 0
      ),
    // The right-hand sides read the row as it was: the old secret becomes the previous one.
    rotateClient: (id, secretHash, previousExpiresAt) =>
      Effect.map(
        rows(
          sql`UPDATE api_clients
              SET previous_secret_hash = secret_hash,
                  previous_secret_expires_at = ${previousExpiresAt},
                  secret_hash = ${secretHash}
              WHERE id = ${id} AND revoked_at IS NULL
              RETURNING id`
        ),
        (rs) => rs.length > 0
      )
  })
)

/**
 * `Accounts` over the `SqlClient` in context (run the migrations first: `Database.ts` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Accounts, never, SqlClient.SqlClient> = Layer.effect(Accounts, make)
