/**
 * What the service stores, as one repository port: organisations, API clients, tokens, link and
 * public tokens, connections, and each sandbox connection's change log. Secrets never reach it in
 * plain text: tokens and client secrets arrive as hashes, provider logins encrypted.
 *
 * Two implementations: `RepoMemory` (tests, and a fallback) and `RepoSql` (`@effect/sql`: SQLite
 * through libsql by default, Postgres when `DATABASE_URL` is set). Both pass `test/Repo.test.ts`.
 *
 * @since 0.1.0
 */
import { Context, Schema } from "effect"
import type { Effect, Option } from "effect"

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
}

/** @since 0.1.0 @category models */
export interface ApiClient {
  readonly id: string
  readonly organisation_id: string
  readonly secret_hash: string
  readonly created_at: number
  readonly revoked_at: number | null
}

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

/** @since 0.1.0 @category models */
export interface Connection {
  readonly id: string
  readonly organisation_id: string
  readonly provider: string
  readonly state: string
  readonly status: "active" | "inactive" | "error" | "pending"
  readonly is_sandbox: boolean
  readonly external_id: string | null
  /** AES-256-GCM ciphertext of the provider login (base64), or null once erased. */
  readonly credentials: string | null
  readonly key_id: string | null
  /** Whether the connection token has been handed out (it is shown once). */
  readonly token_issued: boolean
  readonly created_at: number
  readonly updated_at: number
}

/** @since 0.1.0 @category models */
export interface SandboxChange {
  readonly connection_id: string
  readonly seq: number
  /** JSON text of the change (a sandbox `Change` without functions). */
  readonly change: string
  readonly created_at: number
}

/**
 * The repository. Every method is atomic on its own; `transaction` runs several as one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly insertOrganisation: (o: Organisation) => Effect.Effect<void>
  readonly getOrganisation: (id: string) => Effect.Effect<Option.Option<Organisation>>
  readonly listOrganisations: () => Effect.Effect<ReadonlyArray<Organisation>>
  readonly setPlan: (id: string, plan: Plan) => Effect.Effect<boolean>

  readonly insertClient: (c: ApiClient) => Effect.Effect<void>
  readonly getClient: (id: string) => Effect.Effect<Option.Option<ApiClient>>

  readonly insertToken: (t: Token) => Effect.Effect<void>
  readonly getToken: (hash: string) => Effect.Effect<Option.Option<Token>>
  /** Marks a refresh token used, only if it was unused; false when it was already used (reuse). */
  readonly useToken: (hash: string, at: number) => Effect.Effect<boolean>
  readonly revokeFamily: (family: string, at: number) => Effect.Effect<void>
  readonly revokeConnectionTokens: (connectionId: string, at: number) => Effect.Effect<void>

  readonly insertLinkToken: (t: LinkToken) => Effect.Effect<void>
  readonly getLinkToken: (hash: string) => Effect.Effect<Option.Option<LinkToken>>

  readonly insertPublicToken: (t: PublicToken) => Effect.Effect<void>
  readonly getPublicToken: (hash: string) => Effect.Effect<Option.Option<PublicToken>>
  /** Marks a public token used, only if unused and not expired at `at`; false otherwise. */
  readonly usePublicToken: (hash: string, at: number) => Effect.Effect<boolean>

  readonly insertConnection: (c: Connection) => Effect.Effect<void>
  readonly getConnection: (id: string) => Effect.Effect<Option.Option<Connection>>
  /** One organisation's connections, oldest first, with the total. */
  readonly listConnections: (
    organisationId: string,
    offset: number,
    limit: number
  ) => Effect.Effect<{ readonly items: ReadonlyArray<Connection>; readonly total: number }>
  readonly updateConnection: (
    id: string,
    patch: Partial<Pick<Connection, "status" | "credentials" | "key_id" | "token_issued" | "updated_at">>
  ) => Effect.Effect<void>

  readonly appendSandboxChange: (c: SandboxChange) => Effect.Effect<void>
  readonly listSandboxChanges: (connectionId: string) => Effect.Effect<ReadonlyArray<SandboxChange>>

  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Repo extends Context.Tag("Persistence/Repo")<Repo, Service>() {}
