/**
 * The dashboard's accounts (issue #33, ADR 0026): users, their memberships of organisations,
 * invitations, sessions, failed sign-ins and the audit log. Nothing secret is stored in plain text:
 * a password as its scrypt hash, a TOTP secret sealed by the `Crypto` service, an invitation token
 * and a session id as their SHA-256.
 *
 * SQL over the `SqlClient` in context (SQLite or Postgres, migrated by `Database.ts`, migration
 * `0015_dashboard_accounts`); every row is decoded through a Schema.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer, Option, Schema } from "effect"

const { all, count, exec, one, rows } = SqlRow

/** @since 0.1.0 @category models */
export const Role = Schema.Literal("owner", "admin", "developer", "viewer")
/** @since 0.1.0 @category models */
export type Role = typeof Role.Type

const UserRow = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  password_hash: Schema.String,
  totp_secret: Schema.NullOr(Schema.String),
  totp_key_id: Schema.NullOr(Schema.String),
  totp_enabled: SqlRow.BooleanFromColumn,
  totp_last_step: SqlRow.NumberOrNullFromColumn,
  created_at: SqlRow.NumberFromColumn
})
/** @since 0.1.0 @category models */
export type User = typeof UserRow.Type
const toUser = SqlRow.decoder(UserRow)

const SyncProblemRow = Schema.Struct({
  connection_id: Schema.String,
  facility_id: Schema.String,
  status: Schema.Literal("backfilling", "live", "error"),
  last_synced_at: SqlRow.NumberOrNullFromColumn,
  failing_since: SqlRow.NumberOrNullFromColumn,
  last_error: Schema.NullOr(Schema.String),
  updated_at: SqlRow.NumberFromColumn
})
/**
 * A synced facility that needs a look (`syncProblems`); `updated_at` is its connection's.
 *
 * @since 0.1.0
 * @category models
 */
export type SyncProblem = typeof SyncProblemRow.Type
const toSyncProblem = SqlRow.decoder(SyncProblemRow)

const ConnectionInErrorRow = Schema.Struct({
  id: Schema.String,
  external_id: Schema.NullOr(Schema.String),
  provider: Schema.String,
  state: Schema.String,
  updated_at: SqlRow.NumberFromColumn
})
/**
 * A connection in `error`, as the Issues feed names it.
 *
 * @since 0.1.0
 * @category models
 */
export type ConnectionInError = typeof ConnectionInErrorRow.Type
const toConnectionInError = SqlRow.decoder(ConnectionInErrorRow)

const MembershipRow = Schema.Struct({
  user_id: Schema.String,
  organisation_id: Schema.String,
  role: Role,
  created_at: SqlRow.NumberFromColumn
})
/** @since 0.1.0 @category models */
export type Membership = typeof MembershipRow.Type
const toMembership = SqlRow.decoder(MembershipRow)

const MemberRow = Schema.Struct({
  ...MembershipRow.fields,
  email: Schema.String,
  totp_enabled: SqlRow.BooleanFromColumn
})
/** A membership with its user's e-mail. @since 0.1.0 @category models */
export type Member = typeof MemberRow.Type
const toMember = SqlRow.decoder(MemberRow)

const InvitationRow = Schema.Struct({
  id: Schema.String,
  token_hash: Schema.String,
  organisation_id: Schema.String,
  email: Schema.NullOr(Schema.String),
  role: Role,
  invited_by: Schema.NullOr(Schema.String),
  created_at: SqlRow.NumberFromColumn,
  expires_at: SqlRow.NumberFromColumn,
  used_at: SqlRow.NumberOrNullFromColumn
})
/** @since 0.1.0 @category models */
export type Invitation = typeof InvitationRow.Type
const toInvitation = SqlRow.decoder(InvitationRow)

const SessionRow = Schema.Struct({
  id_hash: Schema.String,
  user_id: Schema.String,
  organisation_id: Schema.String,
  created_at: SqlRow.NumberFromColumn,
  last_seen_at: SqlRow.NumberFromColumn,
  expires_at: SqlRow.NumberFromColumn
})
/** @since 0.1.0 @category models */
export type Session = typeof SessionRow.Type
const toSession = SqlRow.decoder(SessionRow)

const AuditRow = Schema.Struct({
  id: Schema.String,
  organisation_id: Schema.String,
  actor_id: Schema.NullOr(Schema.String),
  actor_email: Schema.NullOr(Schema.String),
  action: Schema.String,
  target: Schema.NullOr(Schema.String),
  detail: SqlRow.JsonColumn(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  at: SqlRow.NumberFromColumn
})
/** @since 0.1.0 @category models */
export type Audit = typeof AuditRow.Type
const toAudit = SqlRow.decoder(AuditRow)

const SsoDomainRow = Schema.Struct({
  domain: Schema.String,
  organisation_id: Schema.String,
  role: Role,
  created_by: Schema.NullOr(Schema.String),
  created_at: SqlRow.NumberFromColumn
})
/** An e-mail domain an organisation claims for single sign-on. @since 0.1.0 @category models */
export type SsoDomain = typeof SsoDomainRow.Type
const toSsoDomain = SqlRow.decoder(SsoDomainRow)

const IdentityRow = Schema.Struct({
  issuer: Schema.String,
  subject: Schema.String,
  user_id: Schema.String,
  created_at: SqlRow.NumberFromColumn
})
/** An OIDC identity (an issuer's subject) linked to a user. @since 0.1.0 @category models */
export type Identity = typeof IdentityRow.Type
const toIdentity = SqlRow.decoder(IdentityRow)

const SsoStateRow = Schema.Struct({
  state_hash: Schema.String,
  nonce: Schema.String,
  code_verifier: Schema.String,
  redirect_uri: Schema.String,
  created_at: SqlRow.NumberFromColumn,
  expires_at: SqlRow.NumberFromColumn
})
/** A single sign-on under way: its state's hash, nonce and PKCE verifier. @since 0.1.0 @category models */
export type SsoState = typeof SsoStateRow.Type
const toSsoState = SqlRow.decoder(SsoStateRow)

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly insertUser: (u: User) => Effect.Effect<void>
  /** Inserts a user unless one holds its e-mail already (two first sign-ins at once); true when inserted. */
  readonly insertUserIfAbsent: (u: User) => Effect.Effect<boolean>
  readonly getUser: (id: string) => Effect.Effect<Option.Option<User>>
  readonly getUserByEmail: (email: string) => Effect.Effect<Option.Option<User>>
  /** Stores a sealed TOTP secret (pending until enabled), or clears it (null); forgets the last step used. */
  readonly setTotp: (
    userId: string,
    sealed: { readonly secret: string; readonly keyId: string } | null,
    enabled: boolean
  ) => Effect.Effect<void>
  /**
   * Records a TOTP time step as used, only if it is later than the last one used (compare-and-set);
   * false when it is not: that code, or an older one, was already used.
   */
  readonly useTotpStep: (userId: string, step: number) => Effect.Effect<boolean>

  readonly insertMembership: (m: Membership) => Effect.Effect<void>
  /** Inserts a membership unless the user is a member already; true when inserted. */
  readonly insertMembershipIfAbsent: (m: Membership) => Effect.Effect<boolean>
  readonly getMembership: (userId: string, organisationId: string) => Effect.Effect<Option.Option<Membership>>
  /** A user's memberships, oldest first. */
  readonly membershipsOf: (userId: string) => Effect.Effect<ReadonlyArray<Membership>>
  /** An organisation's members with their e-mails, oldest first. */
  readonly members: (organisationId: string) => Effect.Effect<ReadonlyArray<Member>>
  readonly setRole: (userId: string, organisationId: string, role: Role) => Effect.Effect<boolean>
  readonly deleteMembership: (userId: string, organisationId: string) => Effect.Effect<boolean>
  readonly countOwners: (organisationId: string) => Effect.Effect<number>

  readonly insertInvitation: (i: Invitation) => Effect.Effect<void>
  readonly getInvitation: (tokenHash: string) => Effect.Effect<Option.Option<Invitation>>
  /** Marks an invitation used, only if it was unused and unexpired; false otherwise (compare-and-set). */
  readonly useInvitation: (id: string, at: number) => Effect.Effect<boolean>
  /** The unused, unexpired invitations made for an e-mail, oldest first. */
  readonly pendingInvitationsFor: (email: string, now: number) => Effect.Effect<ReadonlyArray<Invitation>>

  /** Claims a domain for an organisation; false when some organisation already claims it. */
  readonly insertSsoDomain: (d: SsoDomain) => Effect.Effect<boolean>
  readonly getSsoDomain: (domain: string) => Effect.Effect<Option.Option<SsoDomain>>
  /** An organisation's domains, by name. */
  readonly ssoDomainsOf: (organisationId: string) => Effect.Effect<ReadonlyArray<SsoDomain>>
  readonly deleteSsoDomain: (organisationId: string, domain: string) => Effect.Effect<boolean>

  readonly getIdentity: (issuer: string, subject: string) => Effect.Effect<Option.Option<Identity>>
  readonly insertIdentity: (i: Identity) => Effect.Effect<void>

  /** Stores a sign-in under way; sweeps the ones expired by its `created_at`. */
  readonly insertSsoState: (s: SsoState) => Effect.Effect<void>
  /** Takes a sign-in under way (deleted: a state works once), if it has not expired; sweeps the expired ones. */
  readonly takeSsoState: (stateHash: string, now: number) => Effect.Effect<Option.Option<SsoState>>

  readonly insertSession: (s: Session) => Effect.Effect<void>
  readonly getSession: (idHash: string) => Effect.Effect<Option.Option<Session>>
  readonly touchSession: (idHash: string, at: number) => Effect.Effect<void>
  /** Moves a session to another organisation of its user's (the organisation switch). */
  readonly setSessionOrganisation: (idHash: string, organisationId: string) => Effect.Effect<void>
  readonly deleteSession: (idHash: string) => Effect.Effect<void>
  /** Deletes the sessions that have ended: past their expiry, or unused since `idleBefore`. */
  readonly pruneSessions: (now: number, idleBefore: number) => Effect.Effect<void>
  /** Ends every session of a user in an organisation (removed from it); all organisations when none given. */
  readonly deleteSessionsOf: (userId: string, organisationId?: string) => Effect.Effect<void>

  readonly recordFailure: (keys: ReadonlyArray<string>, at: number) => Effect.Effect<void>
  /** The failures of a key since `since`, and the latest one's time. */
  readonly failuresSince: (key: string, since: number) => Effect.Effect<{ readonly n: number; readonly last: number }>
  readonly clearFailures: (key: string) => Effect.Effect<void>
  /** Forgets failures older than `before` (kept small by every sign-in). */
  readonly pruneFailures: (before: number) => Effect.Effect<void>

  readonly insertAudit: (a: Audit) => Effect.Effect<void>
  /** An organisation's audit entries, newest first. */
  readonly listAudit: (organisationId: string, offset: number, limit: number) => Effect.Effect<ReadonlyArray<Audit>>
  /**
   * The organisation's synced facilities (of connections not disconnected) that need a look, for
   * the Issues feed: failed (`error`), failing (`failing_since` set), or live and last synced
   * before `lagBefore` (or never); the oldest problem first, at most `limit`. Reads the sync's own
   * table (`sync_facilities`) joined with the connections.
   */
  readonly syncProblems: (
    organisationId: string,
    lagBefore: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<SyncProblem>>
  /**
   * The organisation's production connections (not disconnected) of these providers, the newest
   * first, at most `limit`, for the Issues feed: those of a provider whose vendor key is missing
   * (`since` is when each was made).
   */
  readonly productionConnections: (
    organisationId: string,
    providers: ReadonlyArray<string>,
    limit: number
  ) => Effect.Effect<ReadonlyArray<ConnectionInError>>
  /**
   * The organisation's connections in `error` (the state system refused their login: they need a
   * relink), the most recently changed first, at most `limit`, for the Issues feed.
   */
  readonly connectionsInError: (
    organisationId: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<ConnectionInError>>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class DashboardStore extends Context.Tag("Persistence/DashboardStore")<DashboardStore, Service>() {}

const LastRow = Schema.Struct({ n: SqlRow.NumberFromColumn, last: SqlRow.NumberOrNullFromColumn })
const toLast = SqlRow.decoder(LastRow)

/**
 * The store over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => ({
    insertUser: (u) =>
      exec(sql`INSERT INTO dashboard_users ${sql.insert({ ...u, totp_enabled: SqlRow.flag(u.totp_enabled) })}`),
    insertUserIfAbsent: (u) =>
      Effect.map(
        rows(
          sql`INSERT INTO dashboard_users ${sql.insert({ ...u, totp_enabled: SqlRow.flag(u.totp_enabled) })}
              ON CONFLICT (email) DO NOTHING RETURNING id`
        ),
        (inserted) => inserted.length === 1
      ),
    getUser: (id) => one(sql`SELECT * FROM dashboard_users WHERE id = ${id}`, toUser),
    getUserByEmail: (email) => one(sql`SELECT * FROM dashboard_users WHERE email = ${email}`, toUser),
    setTotp: (userId, sealed, enabled) =>
      exec(
        sql`UPDATE dashboard_users SET totp_secret = ${sealed?.secret ?? null}, totp_key_id = ${
          sealed?.keyId ?? null
        }, totp_enabled = ${SqlRow.flag(enabled)}, totp_last_step = NULL WHERE id = ${userId}`
      ),
    useTotpStep: (userId, step) =>
      Effect.map(
        rows(
          sql`UPDATE dashboard_users SET totp_last_step = ${step}
              WHERE id = ${userId} AND (totp_last_step IS NULL OR totp_last_step < ${step}) RETURNING id`
        ),
        (rs) => rs.length === 1
      ),

    insertMembership: (m) => exec(sql`INSERT INTO dashboard_memberships ${sql.insert({ ...m })}`),
    insertMembershipIfAbsent: (m) =>
      Effect.map(
        rows(
          sql`INSERT INTO dashboard_memberships ${sql.insert({ ...m })}
              ON CONFLICT (user_id, organisation_id) DO NOTHING RETURNING user_id`
        ),
        (inserted) => inserted.length === 1
      ),
    getMembership: (userId, organisationId) =>
      one(
        sql`SELECT * FROM dashboard_memberships WHERE user_id = ${userId} AND organisation_id = ${organisationId}`,
        toMembership
      ),
    membershipsOf: (userId) =>
      all(
        sql`SELECT * FROM dashboard_memberships WHERE user_id = ${userId} ORDER BY created_at, organisation_id`,
        toMembership
      ),
    members: (organisationId) =>
      all(
        sql`SELECT m.user_id, m.organisation_id, m.role, m.created_at, u.email, u.totp_enabled
            FROM dashboard_memberships m JOIN dashboard_users u ON u.id = m.user_id
            WHERE m.organisation_id = ${organisationId}
            ORDER BY m.created_at, m.user_id`,
        toMember
      ),
    setRole: (userId, organisationId, role) =>
      Effect.map(
        rows(
          sql`UPDATE dashboard_memberships SET role = ${role}
              WHERE user_id = ${userId} AND organisation_id = ${organisationId} RETURNING user_id`
        ),
        (rs) => rs.length > 0
      ),
    deleteMembership: (userId, organisationId) =>
      Effect.map(
        rows(
          sql`DELETE FROM dashboard_memberships
              WHERE user_id = ${userId} AND organisation_id = ${organisationId} RETURNING user_id`
        ),
        (rs) => rs.length > 0
      ),
    countOwners: (organisationId) =>
      count(
        sql`SELECT COUNT(*) AS n FROM dashboard_memberships WHERE organisation_id = ${organisationId} AND role = 'owner'`
      ),

    insertInvitation: (i) => exec(sql`INSERT INTO dashboard_invitations ${sql.insert({ ...i })}`),
    getInvitation: (tokenHash) =>
      one(sql`SELECT * FROM dashboard_invitations WHERE token_hash = ${tokenHash}`, toInvitation),
    useInvitation: (id, at) =>
      Effect.map(
        rows(
          sql`UPDATE dashboard_invitations SET used_at = ${at}
              WHERE id = ${id} AND used_at IS NULL AND expires_at > ${at} RETURNING id`
        ),
        (rs) => rs.length === 1
      ),

    pendingInvitationsFor: (email, now) =>
      all(
        sql`SELECT * FROM dashboard_invitations WHERE email = ${email} AND used_at IS NULL AND expires_at > ${now}
            ORDER BY created_at, id`,
        toInvitation
      ),

    insertSsoDomain: (d) =>
      Effect.map(
        rows(
          sql`INSERT INTO dashboard_sso_domains ${
            sql.insert({ ...d })
          } ON CONFLICT (domain) DO NOTHING RETURNING domain`
        ),
        (rs) => rs.length === 1
      ),
    getSsoDomain: (domain) => one(sql`SELECT * FROM dashboard_sso_domains WHERE domain = ${domain}`, toSsoDomain),
    ssoDomainsOf: (organisationId) =>
      all(
        sql`SELECT * FROM dashboard_sso_domains WHERE organisation_id = ${organisationId} ORDER BY domain`,
        toSsoDomain
      ),
    deleteSsoDomain: (organisationId, domain) =>
      Effect.map(
        rows(
          sql`DELETE FROM dashboard_sso_domains
              WHERE organisation_id = ${organisationId} AND domain = ${domain} RETURNING domain`
        ),
        (rs) => rs.length > 0
      ),

    getIdentity: (issuer, subject) =>
      one(
        sql`SELECT * FROM dashboard_identities WHERE issuer = ${issuer} AND subject = ${subject}`,
        toIdentity
      ),
    insertIdentity: (i) =>
      exec(sql`INSERT INTO dashboard_identities ${sql.insert({ ...i })} ON CONFLICT (issuer, subject) DO NOTHING`),

    insertSsoState: (st) =>
      Effect.zipRight(
        // every start sweeps the sign-ins that were never finished, so that they do not pile up
        exec(sql`DELETE FROM dashboard_sso_states WHERE expires_at <= ${st.created_at}`),
        exec(sql`INSERT INTO dashboard_sso_states ${sql.insert({ ...st })}`)
      ),
    takeSsoState: (stateHash, now) =>
      Effect.gen(function*() {
        yield* exec(sql`DELETE FROM dashboard_sso_states WHERE expires_at <= ${now}`)
        const taken = yield* all(
          sql`DELETE FROM dashboard_sso_states WHERE state_hash = ${stateHash} RETURNING *`,
          toSsoState
        )
        const found = taken[0]
        return found === undefined || found.expires_at <= now ? Option.none() : Option.some(found)
      }),

    insertSession: (s) => exec(sql`INSERT INTO dashboard_sessions ${sql.insert({ ...s })}`),
    getSession: (idHash) => one(sql`SELECT * FROM dashboard_sessions WHERE id_hash = ${idHash}`, toSession),
    touchSession: (idHash, at) =>
      exec(sql`UPDATE dashboard_sessions SET last_seen_at = ${at} WHERE id_hash = ${idHash}`),
    setSessionOrganisation: (idHash, organisationId) =>
      exec(sql`UPDATE dashboard_sessions SET organisation_id = ${organisationId} WHERE id_hash = ${idHash}`),
    deleteSession: (idHash) => exec(sql`DELETE FROM dashboard_sessions WHERE id_hash = ${idHash}`),
    pruneSessions: (now, idleBefore) =>
      exec(sql`DELETE FROM dashboard_sessions WHERE expires_at <= ${now} OR last_seen_at <= ${idleBefore}`),
    deleteSessionsOf: (userId, organisationId) =>
      organisationId === undefined
        ? exec(sql`DELETE FROM dashboard_sessions WHERE user_id = ${userId}`)
        : exec(
          sql`DELETE FROM dashboard_sessions WHERE user_id = ${userId} AND organisation_id = ${organisationId}`
        ),

    recordFailure: (keys, at) =>
      keys.length === 0
        ? Effect.void
        : exec(sql`INSERT INTO dashboard_sign_in_failures ${sql.insert(keys.map((key) => ({ key, at })))}`),
    failuresSince: (key, since) =>
      Effect.map(
        one(
          sql`SELECT COUNT(*) AS n, MAX(at) AS last FROM dashboard_sign_in_failures WHERE key = ${key} AND at > ${since}`,
          toLast
        ),
        (found) => found._tag === "Some" ? { n: found.value.n, last: found.value.last ?? 0 } : { n: 0, last: 0 }
      ),
    clearFailures: (key) => exec(sql`DELETE FROM dashboard_sign_in_failures WHERE key = ${key}`),
    pruneFailures: (before) => exec(sql`DELETE FROM dashboard_sign_in_failures WHERE at <= ${before}`),

    insertAudit: (a) =>
      exec(sql`INSERT INTO dashboard_audit ${sql.insert({ ...a, detail: JSON.stringify(a.detail) })}`),
    listAudit: (organisationId, offset, limit) =>
      all(
        sql`SELECT * FROM dashboard_audit WHERE organisation_id = ${organisationId}
            ORDER BY at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
        toAudit
      ),
    syncProblems: (organisationId, lagBefore, limit) =>
      all(
        sql`SELECT f.connection_id, f.facility_id, f.status, f.last_synced_at, f.failing_since, f.last_error,
              c.updated_at
            FROM sync_facilities f JOIN connections c ON c.id = f.connection_id
            WHERE c.organisation_id = ${organisationId} AND c.status <> 'inactive'
              AND (f.status = 'error' OR f.failing_since IS NOT NULL
                OR (f.status = 'live' AND f.last_synced_at IS NOT NULL AND f.last_synced_at < ${lagBefore}))
            ORDER BY COALESCE(f.failing_since, f.last_synced_at, c.updated_at) DESC, f.connection_id, f.facility_id
            LIMIT ${Math.max(0, limit)}`,
        toSyncProblem
      ),
    productionConnections: (organisationId, providers, limit) =>
      providers.length === 0
        ? Effect.succeed([])
        : all(
          sql`SELECT id, external_id, provider, state, created_at AS updated_at FROM connections
              WHERE organisation_id = ${organisationId} AND is_sandbox = ${SqlRow.flag(false)}
                AND status <> 'inactive' AND ${sql.in("provider", providers)}
              ORDER BY created_at DESC, id LIMIT ${Math.max(0, limit)}`,
          toConnectionInError
        ),
    connectionsInError: (organisationId, limit) =>
      all(
        sql`SELECT id, external_id, provider, state, updated_at FROM connections
            WHERE organisation_id = ${organisationId} AND status = 'error'
            ORDER BY updated_at DESC, id LIMIT ${Math.max(0, limit)}`,
        toConnectionInError
      )
  })
)

/**
 * `DashboardStore` over the `SqlClient` in context (run the migrations first: `Database.ts` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<DashboardStore, never, SqlClient.SqlClient> = Layer.effect(DashboardStore, make)
