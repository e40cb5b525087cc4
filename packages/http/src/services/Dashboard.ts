/**
 * The dashboard's accounts (issue #33, ADR 0026, `docs/dashboard.md`): sign-in with a password
 * (scrypt) and an optional TOTP code, sessions, invitations, the team and its roles, the audit
 * log, and the API Keys page's operations. The HTTP side is `handlers/DashboardHttp.ts`.
 *
 * - Passwords: `crypto.scrypt` (N=2^15, r=8, p=1, 32 bytes), a 16-byte salt per user, stored as
 *   `scrypt$N$r$p$salt$hash` so that the parameters can be raised later.
 * - Sessions: a random id (`tbs_…`, 32 bytes) in the cookie, stored as its SHA-256, a new one at
 *   every sign-in (the old one, if sent, is ended: no session fixation); it ends 12 hours after
 *   sign-in, or after 30 minutes without a request. The CSRF token is an HMAC of the session id under
 *   a key derived from the keyring (`Crypto.derive`), so it is never stored.
 * - Throttle: 5 failed sign-ins of one account within 15 minutes lock that account for 15 minutes
 *   after the last failure; 20 from one address within 15 minutes lock that address the same way.
 *   While locked, even the right password is refused (429 with `Retry-After`).
 * - Roles: viewer reads; developer also manages API keys; admin also manages the team except
 *   owners; owner everything. An organisation always keeps an owner.
 *
 * @since 0.1.0
 */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import type { DashboardApi } from "@tracebridge/api"
import type { Principal } from "@tracebridge/api/Security"
import { Clock, Context, Effect, Either, Layer, Option } from "effect"
import { createHmac, randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import * as OTPAuth from "otpauth"
import * as Errors from "../Errors.js"
import { Accounts } from "../persistence/Accounts.js"
import type { Membership, Role } from "../persistence/DashboardStore.js"
import { DashboardStore } from "../persistence/DashboardStore.js"
import { Tokens } from "../persistence/Tokens.js"
import { Transactions } from "../persistence/Transactions.js"
import * as ApiClients from "./ApiClients.js"
import * as Crypto from "./Crypto.js"
import { acceptLink, audit, createInvitation } from "./Invitations.js"
import * as SsoDomains from "./SsoDomains.js"

type Me = typeof DashboardApi.Me.Type
type SessionInfo = DashboardApi.SessionInfo

/**
 * What a dashboard call may fail with (each an envelope error `DashboardApi` declares).
 *
 * @since 0.1.0
 * @category models
 */
export type Failure =
  | Errors.ValidationError
  | Errors.AuthenticationError
  | Errors.PermissionError
  | Errors.NotFoundError
  | Errors.ConflictError
  | Errors.RateLimitError

/** How long a session lives after sign-in, at most (ms). @since 0.1.0 @category constants */
export const SESSION_TTL_MS = 12 * 3_600_000
/** How long a session lives without a request (ms). @since 0.1.0 @category constants */
export const SESSION_IDLE_MS = 30 * 60_000
/** Failed sign-ins of one account within the window that lock it. @since 0.1.0 @category constants */
export const ACCOUNT_FAILURES = 5
/** Failed sign-ins from one address within the window that lock it. @since 0.1.0 @category constants */
export const ADDRESS_FAILURES = 20
/** The throttle's window, and how long a lock lasts after the last failure (ms). @since 0.1.0 @category constants */
export const LOCK_WINDOW_MS = 15 * 60_000
/** `last_seen_at` is written at most this often per session (ms). */
const TOUCH_EVERY_MS = 60_000

const CSRF_LABEL = "tracebridge/dashboard/csrf"

/** A first sign-in lost the insert of its new account to another at the same moment (retried). */
class LostRace {
  readonly _tag = "LostRace"
}

// ---------------------------------------------------------------------------------------------
// Passwords
// ---------------------------------------------------------------------------------------------

const SCRYPT = { N: 32_768, r: 8, p: 1, keylen: 32 }

const scryptAsync = (password: string, salt: Buffer, N: number, r: number, p: number, keylen: number) =>
  Effect.async<Buffer>((resume) => {
    scrypt(password.normalize("NFC"), salt, keylen, { N, r, p, maxmem: 256 * N * r + 1_048_576 }, (error, key) => {
      resume(error === null ? Effect.succeed(key) : Effect.die(error))
    })
  })

/**
 * A password's stored form: `scrypt$N$r$p$<salt base64>$<hash base64>`.
 *
 * @since 0.1.0
 * @category passwords
 */
export const hashPassword = (password: string): Effect.Effect<string> =>
  Effect.suspend(() => {
    const salt = randomBytes(16)
    return Effect.map(
      scryptAsync(password, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p, SCRYPT.keylen),
      (key) => `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString("base64")}$${key.toString("base64")}`
    )
  })

/**
 * Whether a password matches its stored form (constant-time comparison).
 *
 * @since 0.1.0
 * @category passwords
 */
export const verifyPassword = (password: string, stored: string): Effect.Effect<boolean> => {
  const [scheme, n, r, p, salt, hash] = stored.split("$")
  if (scheme !== "scrypt" || salt === undefined || hash === undefined) return Effect.succeed(false)
  const expected = Buffer.from(hash, "base64")
  return Effect.map(
    scryptAsync(password, Buffer.from(salt, "base64"), Number(n), Number(r), Number(p), expected.length),
    (key) => key.length === expected.length && timingSafeEqual(key, expected)
  )
}

/** Compared against when the e-mail is unknown, so that an unknown account costs as long as a known one. */
const DUMMY_HASH = `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${Buffer.alloc(16).toString("base64")}$${
  Buffer.alloc(32).toString("base64")
}`

// ---------------------------------------------------------------------------------------------
// TOTP
// ---------------------------------------------------------------------------------------------

const totpOf = (secret: string, email: string) =>
  new OTPAuth.TOTP({
    issuer: "Tracebridge",
    label: email,
    algorithm: "SHA1",
    digits: 6,
    period: 30,
    secret: OTPAuth.Secret.fromBase32(secret)
  })

/** The 30-second time step a code is right for now (one step either side, for clock drift); undefined when wrong. */
const totpStep = (secret: string, email: string, code: string, now: number): number | undefined => {
  const delta = totpOf(secret, email).validate({ token: code, timestamp: now, window: 1 })
  return delta === null ? undefined : Math.floor(now / 30_000) + delta
}

// ---------------------------------------------------------------------------------------------
// Roles
// ---------------------------------------------------------------------------------------------

const rank: Record<Role, number> = { viewer: 0, developer: 1, admin: 2, owner: 3 }

/**
 * Whether a role is at least another.
 *
 * @since 0.1.0
 * @category roles
 */
export const atLeast = (role: Role, needed: Role): boolean => rank[role] >= rank[needed]

const requireRole = (session: SessionInfo, needed: Role, what: string) =>
  atLeast(session.role, needed)
    ? Effect.void
    : Errors.fail("permission_error", "forbidden", `${what} needs the ${needed} role or above; you are ${session.role}`)

// ---------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------

/**
 * A new session: the cookie's value (to set once) and who signed in.
 *
 * @since 0.1.0
 * @category models
 */
export interface Opened {
  readonly sessionId: string
  readonly me: Me
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Signs in; `previous` is a session cookie the browser still sent (ended: a new id every time). */
  readonly signIn: (
    input: typeof DashboardApi.SignIn.Type,
    address: string,
    previous: string | undefined
  ) => Effect.Effect<Opened, Failure>
  /** Accepts an invitation; an existing account's password is checked, and throttled, as at sign-in. */
  readonly acceptInvitation: (
    input: typeof DashboardApi.AcceptInvitation.Type,
    address: string,
    previous: string | undefined
  ) => Effect.Effect<Opened, Failure>
  /** The session of a cookie; a change (`mutating`) also needs the CSRF token. */
  readonly authenticate: (
    sessionId: string,
    mutating: boolean,
    csrf: string | undefined
  ) => Effect.Effect<SessionInfo, Errors.AuthenticationError | Errors.PermissionError>
  /**
   * Signs in a person whose identity provider vouched for them (single sign-on; the ID token is
   * verified, and its e-mail verified, by the caller): the user linked to this issuer's subject,
   * else the user of this e-mail (then linked), else a new one; every pending invitation for the
   * e-mail is accepted, else the organisation that claims its domain is joined with the mapping's
   * role; the session opens through the same code as a password sign-in. No organisation: 403.
   */
  readonly signInFederated: (
    identity: { readonly issuer: string; readonly subject: string; readonly email: string },
    previous: string | undefined
  ) => Effect.Effect<Opened, Failure>
  readonly me: (session: SessionInfo) => Effect.Effect<Me, Failure>
  /** Moves the session to another organisation of the user's (404 when not a member of it). */
  readonly switchOrganisation: (session: SessionInfo, organisationId: string) => Effect.Effect<Me, Failure>
  readonly ssoDomains: (session: SessionInfo) => Effect.Effect<ReadonlyArray<typeof DashboardApi.SsoDomain.Type>>
  readonly addSsoDomain: (
    session: SessionInfo,
    input: typeof DashboardApi.SsoDomainCreate.Type
  ) => Effect.Effect<typeof DashboardApi.SsoDomain.Type, Failure>
  readonly removeSsoDomain: (session: SessionInfo, domain: string) => Effect.Effect<void, Failure>
  readonly signOut: (session: SessionInfo) => Effect.Effect<void>

  readonly totpEnrol: (session: SessionInfo) => Effect.Effect<typeof DashboardApi.TotpEnrolment.Type, Failure>
  readonly totpConfirm: (session: SessionInfo, code: string) => Effect.Effect<void, Failure>
  readonly totpDisable: (session: SessionInfo, code: string) => Effect.Effect<void, Failure>

  readonly members: (session: SessionInfo) => Effect.Effect<ReadonlyArray<typeof DashboardApi.Member.Type>>
  readonly invite: (
    session: SessionInfo,
    input: typeof DashboardApi.InvitationCreate.Type,
    origin: string
  ) => Effect.Effect<typeof DashboardApi.Invitation.Type, Failure>
  readonly changeRole: (
    session: SessionInfo,
    userId: string,
    role: Role
  ) => Effect.Effect<typeof DashboardApi.Member.Type, Failure>
  readonly removeMember: (session: SessionInfo, userId: string) => Effect.Effect<void, Failure>
  readonly audit: (
    session: SessionInfo,
    page: number,
    perPage: number
  ) => Effect.Effect<typeof DashboardApi.AuditPage.Type>

  readonly listKeys: (session: SessionInfo) => Effect.Effect<ReadonlyArray<typeof DashboardApi.ApiKey.Type>>
  readonly createKey: (session: SessionInfo) => Effect.Effect<typeof DashboardApi.ApiKeySecret.Type, Failure>
  readonly rollKey: (
    session: SessionInfo,
    clientId: string,
    expiresInSeconds: number
  ) => Effect.Effect<typeof DashboardApi.ApiKeySecret.Type, Failure>
  readonly revokeKey: (
    session: SessionInfo,
    clientId: string
  ) => Effect.Effect<typeof DashboardApi.ApiKey.Type, Failure>

  /**
   * Checks the member's role for a change (`what` names it in the 403), and gives the `/v1`
   * principal the change runs as: the member's organisation, every connection of it, the scopes
   * its plan allows; so the dashboard's actions run `/v1`'s own code.
   */
  readonly actAs: (session: SessionInfo, needed: Role, what: string) => Effect.Effect<Principal, Failure>
  /** Records a change made by the member in the organisation's audit log. */
  readonly record: (
    session: SessionInfo,
    action: string,
    target: string | null,
    detail?: Record<string, unknown>
  ) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Dashboard extends Context.Tag("Services/Dashboard")<Dashboard, Service>() {}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(
  Dashboard,
  Effect.gen(function*() {
    const store = yield* DashboardStore
    const accounts = yield* Accounts
    const transactions = yield* Transactions
    const tokens = yield* Tokens
    const crypto = yield* Crypto.Crypto
    const provide = <A, E>(effect: Effect.Effect<A, E, DashboardStore | Accounts | Tokens>) =>
      effect.pipe(
        Effect.provideService(DashboardStore, store),
        Effect.provideService(Accounts, accounts),
        Effect.provideService(Tokens, tokens)
      )

    const csrfOf = (sessionId: string, key: Buffer) => createHmac("sha256", key).update(sessionId).digest("base64url")
    const csrfMatches = (sessionId: string, given: string) => {
      const a = Buffer.from(given)
      return crypto.derive(CSRF_LABEL).some((key) => {
        const b = Buffer.from(csrfOf(sessionId, key))
        return a.length === b.length && timingSafeEqual(a, b)
      })
    }
    const csrfFor = (sessionId: string) => csrfOf(sessionId, crypto.derive(CSRF_LABEL)[0]!)

    const unauthorized = (message: string, param?: string) =>
      Errors.fail("authentication_error", "unauthorized", message, param)

    const locked = (retryAfterMs: number, what: string) => {
      const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000))
      return Effect.zipRight(
        HttpApp.appendPreResponseHandler((_request, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(seconds)))
        ),
        Errors.fail("rate_limit_error", "rate_limited", `${what}; try again in ${seconds} s`)
      )
    }

    /** Refuses while the account or the address is locked. */
    const checkThrottle = (accountKey: string, addressKey: string, now: number) =>
      Effect.gen(function*() {
        yield* store.pruneFailures(now - LOCK_WINDOW_MS)
        const account = yield* store.failuresSince(accountKey, now - LOCK_WINDOW_MS)
        if (account.n >= ACCOUNT_FAILURES) {
          return yield* locked(
            account.last + LOCK_WINDOW_MS - now,
            `Too many failed sign-ins for this account (${ACCOUNT_FAILURES} in 15 minutes); it is locked`
          )
        }
        const address = yield* store.failuresSince(addressKey, now - LOCK_WINDOW_MS)
        if (address.n >= ADDRESS_FAILURES) {
          return yield* locked(
            address.last + LOCK_WINDOW_MS - now,
            `Too many failed sign-ins from this address (${ADDRESS_FAILURES} in 15 minutes)`
          )
        }
      })

    const organisationOf = (id: string) =>
      Effect.flatMap(accounts.getOrganisation(id), (found) =>
        Option.isSome(found)
          ? Effect.succeed(found.value)
          : Effect.dieMessage(`a membership names organisation ${id}, which does not exist`))

    /** Every organisation a user is a member of (oldest membership first), for the organisation switch. */
    const organisationsOf = (userId: string) =>
      Effect.flatMap(
        store.membershipsOf(userId),
        (memberships) =>
          Effect.forEach(memberships, (m) =>
            Effect.map(organisationOf(m.organisation_id), (o) => ({ id: o.id, name: o.name, role: m.role })))
      )

    const meOf = (
      user: { readonly id: string; readonly email: string; readonly totp_enabled: boolean },
      membership: Membership,
      sessionId: string,
      expiresAt: number
    ) =>
      Effect.gen(function*() {
        const organisation = yield* organisationOf(membership.organisation_id)
        return {
          user: { id: user.id, email: user.email, totp_enabled: user.totp_enabled },
          organisation: { id: organisation.id, name: organisation.name, plan: organisation.plan },
          role: membership.role,
          organisations: yield* organisationsOf(user.id),
          csrf_token: csrfFor(sessionId),
          expires_at: expiresAt
        } satisfies Me
      })

    /** A new session (a fresh id every time; the one the browser still had is ended). */
    const open = (
      user: { readonly id: string; readonly email: string; readonly totp_enabled: boolean },
      membership: Membership,
      previous: string | undefined
    ) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        if (previous !== undefined && previous !== "") yield* store.deleteSession(Crypto.hash(previous))
        // every sign-in sweeps the sessions that have ended, so that they do not pile up
        yield* store.pruneSessions(now, now - SESSION_IDLE_MS)
        const sessionId = Crypto.token("tbs_")
        const expiresAt = now + SESSION_TTL_MS
        yield* store.insertSession({
          id_hash: Crypto.hash(sessionId),
          user_id: user.id,
          organisation_id: membership.organisation_id,
          created_at: now,
          last_seen_at: now,
          expires_at: expiresAt
        })
        return { sessionId, me: yield* meOf(user, membership, sessionId, expiresAt) }
      })

    /**
     * The end of every sign-in, by password or by single sign-on: a new session in the
     * organisation chosen, and the audit entry (`method` says which way).
     */
    /** One try of `signInFederated`: fails with `LostRace` when another sign-in made the account meanwhile. */
    const federated = (
      identity: { readonly issuer: string; readonly subject: string; readonly email: string },
      previous: string | undefined
    ): Effect.Effect<Opened, Failure | LostRace> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const email = identity.email.toLowerCase()
        const domain = SsoDomains.domainOf(email)
        const linked = yield* store.getIdentity(identity.issuer, identity.subject)
        const known = Option.isSome(linked) ? yield* store.getUser(linked.value.user_id) : Option.none()
        const existing = Option.isSome(known) ? known : yield* store.getUserByEmail(email)
        const user = Option.getOrElse(existing, () => ({
          id: Crypto.id("usr_"),
          email,
          // no password: this account signs in through its identity provider (or accepts an invitation's reset later)
          password_hash: "",
          totp_secret: null,
          totp_key_id: null,
          totp_enabled: false,
          totp_last_step: null,
          created_at: now
        }))
        const invitations = yield* store.pendingInvitationsFor(email, now)
        const mapping = yield* store.getSsoDomain(domain)
        const joined = yield* transactions.transaction(Effect.gen(function*() {
          const memberships = Option.isSome(existing) ? yield* store.membershipsOf(user.id) : []
          const isMember = (organisationId: string) => memberships.some((m) => m.organisation_id === organisationId)
          const added: Array<Membership> = []
          const join = (organisationId: string, role: Role) => {
            const membership: Membership = {
              user_id: user.id,
              organisation_id: organisationId,
              role,
              created_at: now
            }
            // a member already (a sign-in at the same moment joined first): nothing to add
            return Effect.map(store.insertMembershipIfAbsent(membership), (inserted) => {
              if (inserted) added.push(membership)
            })
          }
          if (Option.isNone(existing) && invitations.length === 0 && Option.isNone(mapping)) return undefined
          if (Option.isNone(existing) && !(yield* store.insertUserIfAbsent(user))) {
            return yield* Effect.fail(new LostRace())
          }
          // 1. every pending invitation for this e-mail is accepted (compare-and-set, as by link)
          for (const inv of invitations) {
            if (isMember(inv.organisation_id) || added.some((m) => m.organisation_id === inv.organisation_id)) {
              continue
            }
            if (!(yield* store.useInvitation(inv.id, now))) continue
            yield* join(inv.organisation_id, inv.role)
            yield* provide(
              audit(inv.organisation_id, { id: user.id, email }, "invitation.accepted", email, {
                role: inv.role,
                invitation_id: inv.id,
                method: "oidc"
              })
            )
          }
          // 2. else the organisation that claims the e-mail's domain
          if (
            Option.isSome(mapping) && !isMember(mapping.value.organisation_id) &&
            !added.some((m) => m.organisation_id === mapping.value.organisation_id)
          ) {
            yield* join(mapping.value.organisation_id, mapping.value.role)
            yield* provide(
              audit(mapping.value.organisation_id, { id: user.id, email }, "member.joined_by_domain", email, {
                role: mapping.value.role,
                domain
              })
            )
          }
          yield* store.insertIdentity({
            issuer: identity.issuer,
            subject: identity.subject,
            user_id: user.id,
            created_at: now
          })
          return { added, memberships: yield* store.membershipsOf(user.id) }
        }))
        // the organisation just joined opens; else the oldest membership, as a password sign-in's
        const membership = joined?.added[0] ?? joined?.memberships[0]
        if (joined === undefined || membership === undefined) {
          return yield* Errors.fail(
            "permission_error",
            "forbidden",
            `No organisation for this e-mail domain (${domain}): ask an organisation's admin for an invitation, or to add the domain to its single sign-on domains`
          )
        }
        // single sign-on skips the local TOTP code: the identity provider owns the second factor (ADR 0029)
        return yield* signInAs(user, membership, previous, "oidc")
      })

    const signInAs = (
      user: { readonly id: string; readonly email: string; readonly totp_enabled: boolean },
      membership: Membership,
      previous: string | undefined,
      method: "password" | "oidc"
    ) =>
      Effect.gen(function*() {
        const opened = yield* open(user, membership, previous)
        yield* provide(
          audit(
            membership.organisation_id,
            { id: user.id, email: user.email },
            "session.signed_in",
            user.email,
            method === "password" ? {} : { method }
          )
        )
        return opened
      })

    const actorOf = (session: SessionInfo) => ({ id: session.user_id, email: session.email })

    const memberView = (m: {
      readonly user_id: string
      readonly email: string
      readonly role: Role
      readonly totp_enabled: boolean
      readonly created_at: number
    }) => ({ user_id: m.user_id, email: m.email, role: m.role, totp_enabled: m.totp_enabled, joined_at: m.created_at })

    /** A member of the session's organisation, or 404 (another organisation's members are never seen). */
    const memberOf = (session: SessionInfo, userId: string) =>
      Effect.flatMap(store.members(session.organisation_id), (members) => {
        const found = members.find((m) => m.user_id === userId)
        return found === undefined
          ? Errors.fail("not_found_error", "resource_not_found", "No such member in this organisation")
          : Effect.succeed(found)
      })

    /** The session organisation's client, or 404 (another organisation's clients answer the same). */
    const clientOf = (session: SessionInfo, clientId: string) =>
      Effect.flatMap(
        accounts.getClient(clientId),
        (found) =>
          Option.isSome(found) && found.value.organisation_id === session.organisation_id
            ? Effect.succeed(found.value)
            : Errors.fail("not_found_error", "resource_not_found", "No such API key in this organisation")
      )

    const keyView = (
      client: {
        readonly id: string
        readonly created_at: number
        readonly revoked_at: number | null
        readonly previous_secret_expires_at?: number
        readonly created_by?: string
        readonly last_used_at?: number
      },
      emails: ReadonlyMap<string, string>,
      now: number
    ): typeof DashboardApi.ApiKey.Type => ({
      client_id: client.id,
      created_at: client.created_at,
      created_by: client.created_by === undefined ? null : emails.get(client.created_by) ?? null,
      last_used_at: client.last_used_at ?? null,
      revoked_at: client.revoked_at,
      previous_secret_expires_at: client.revoked_at === null && client.previous_secret_expires_at !== undefined &&
          client.previous_secret_expires_at > now
        ? client.previous_secret_expires_at
        : null
    })

    const emailsOf = (organisationId: string, extra: ReadonlyArray<string | undefined>) =>
      Effect.gen(function*() {
        const emails = new Map((yield* store.members(organisationId)).map((m) => [m.user_id, m.email]))
        // a maker who has since left the organisation is still named
        for (const id of extra) {
          if (id !== undefined && !emails.has(id)) {
            const user = yield* store.getUser(id)
            if (Option.isSome(user)) emails.set(id, user.value.email)
          }
        }
        return emails
      })

    const ssoDomainView = (d: { readonly domain: string; readonly role: Role; readonly created_at: number }) => ({
      domain: d.domain,
      role: d.role,
      created_at: d.created_at
    })

    const service: Service = {
      signIn: (input, address, previous) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const email = input.email.toLowerCase()
          const accountKey = `account:${email}`
          const addressKey = `address:${address}`
          yield* checkThrottle(accountKey, addressKey, now)
          const fail = (message: string, param?: string) =>
            Effect.zipRight(store.recordFailure([accountKey, addressKey], now), unauthorized(message, param))
          const user = yield* store.getUserByEmail(email)
          // an account without a password (made by single sign-on) costs the same scrypt, and never matches
          const hasPassword = Option.isSome(user) && user.value.password_hash !== ""
          const ok = yield* verifyPassword(input.password, hasPassword ? user.value.password_hash : DUMMY_HASH)
          if (Option.isNone(user) || !hasPassword || !ok) return yield* fail("Wrong e-mail or password")
          if (user.value.totp_enabled) {
            if (input.totp_code === undefined) {
              return yield* unauthorized("This account needs the 6-digit code of its authenticator app", "totp_code")
            }
            const secret = crypto.decrypt(user.value.totp_secret ?? "", user.value.totp_key_id ?? "")
            const step = totpStep(secret, email, input.totp_code, now)
            // a code works once: a step at or before the last one used is refused (replay)
            if (step === undefined || !(yield* store.useTotpStep(user.value.id, step))) {
              return yield* fail("The authenticator code is wrong, too old or already used", "totp_code")
            }
          }
          const memberships = yield* store.membershipsOf(user.value.id)
          const membership = input.organisation_id === undefined
            ? memberships[0]
            : memberships.find((m) => m.organisation_id === input.organisation_id)
          if (membership === undefined) {
            return yield* unauthorized(
              input.organisation_id === undefined
                ? "This account is no longer a member of any organisation"
                : "This account is not a member of that organisation",
              input.organisation_id === undefined ? undefined : "organisation_id"
            )
          }
          yield* store.clearFailures(accountKey)
          return yield* signInAs(user.value, membership, previous, "password")
        }),

      // Two first sign-ins of one person at once both read "no account" before either writes one:
      // the one that loses the insert reads again and signs in to the account the other made.
      signInFederated: (identity, previous) =>
        Effect.suspend(() => federated(identity, previous)).pipe(
          Effect.retry({ times: 3, while: (e) => e instanceof LostRace }),
          Effect.catchIf((e): e is LostRace => e instanceof LostRace, () =>
            Errors.fail(
              "conflict_error",
              "write_conflict",
              "Another sign-in of this account is under way; try again"
            ))
        ),

      acceptInvitation: (input, address, previous) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const email = input.email.toLowerCase()
          const accountKey = `account:${email}`
          const addressKey = `address:${address}`
          const invitation = yield* store.getInvitation(Crypto.hash(input.token))
          if (Option.isNone(invitation)) {
            return yield* Errors.fail(
              "validation_error",
              "invalid_parameter",
              "The invitation link is unknown",
              "token"
            )
          }
          const inv = invitation.value
          if (inv.used_at !== null) {
            return yield* Errors.fail(
              "validation_error",
              "invalid_parameter",
              "The invitation was already used; ask for a new one",
              "token"
            )
          }
          if (inv.expires_at <= now) {
            return yield* Errors.fail(
              "validation_error",
              "invalid_parameter",
              "The invitation has expired; ask for a new one",
              "token"
            )
          }
          if (inv.email !== null && inv.email !== email) {
            return yield* Errors.fail(
              "validation_error",
              "invalid_parameter",
              "The invitation is for another e-mail address",
              "email"
            )
          }
          const existing = yield* store.getUserByEmail(email)
          if (Option.isSome(existing)) {
            // an existing account joins with its own password, under the sign-in's throttle (an
            // invitation for any e-mail must not become a way round the lockout)
            yield* checkThrottle(accountKey, addressKey, now)
            if (!(yield* verifyPassword(input.password, existing.value.password_hash))) {
              yield* store.recordFailure([accountKey, addressKey], now)
              return yield* unauthorized("An account with this e-mail exists; give its password")
            }
            yield* store.clearFailures(accountKey)
            if (Option.isSome(yield* store.getMembership(existing.value.id, inv.organisation_id))) {
              return yield* Errors.fail(
                "conflict_error",
                "write_conflict",
                "This account is already a member of the organisation"
              )
            }
          }
          const passwordHash = Option.isSome(existing) ? "" : yield* hashPassword(input.password)
          const user = Option.isSome(existing)
            ? existing.value
            : {
              id: Crypto.id("usr_"),
              email,
              password_hash: passwordHash,
              totp_secret: null,
              totp_key_id: null,
              totp_enabled: false,
              totp_last_step: null,
              created_at: now
            }
          const membership: Membership = {
            user_id: user.id,
            organisation_id: inv.organisation_id,
            role: inv.role,
            created_at: now
          }
          const accepted = yield* transactions.transaction(Effect.gen(function*() {
            // compare-and-set: of two acceptances of one link, one wins
            if (!(yield* store.useInvitation(inv.id, now))) return false
            if (Option.isNone(existing)) yield* store.insertUser(user)
            yield* store.insertMembership(membership)
            yield* provide(
              audit(inv.organisation_id, { id: user.id, email }, "invitation.accepted", email, {
                role: inv.role,
                invitation_id: inv.id
              })
            )
            return true
          }))
          if (!accepted) {
            return yield* Errors.fail(
              "validation_error",
              "invalid_parameter",
              "The invitation was already used; ask for a new one",
              "token"
            )
          }
          return yield* open(user, membership, previous)
        }),

      authenticate: (sessionId, mutating, csrf) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const idHash = Crypto.hash(sessionId)
          const session = sessionId === "" ? Option.none() : yield* store.getSession(idHash)
          if (Option.isNone(session)) return yield* unauthorized("Sign in to the dashboard first")
          const s = session.value
          if (s.expires_at <= now || now - s.last_seen_at >= SESSION_IDLE_MS) {
            yield* store.deleteSession(idHash)
            return yield* Errors.fail("authentication_error", "token_expired", "The session has ended; sign in again")
          }
          const membership = yield* store.getMembership(s.user_id, s.organisation_id)
          const user = yield* store.getUser(s.user_id)
          if (Option.isNone(membership) || Option.isNone(user)) {
            yield* store.deleteSession(idHash)
            return yield* unauthorized("This account is no longer a member of the organisation")
          }
          if (mutating && (csrf === undefined || !csrfMatches(sessionId, csrf))) {
            return yield* Errors.fail(
              "permission_error",
              "forbidden",
              "The CSRF token is missing or wrong: send the session's csrf_token in the X-CSRF-Token header",
              "x-csrf-token"
            )
          }
          if (now - s.last_seen_at >= TOUCH_EVERY_MS) yield* store.touchSession(idHash, now)
          return {
            session_hash: idHash,
            csrf_token: csrfFor(sessionId),
            user_id: s.user_id,
            email: user.value.email,
            organisation_id: s.organisation_id,
            role: membership.value.role,
            expires_at: s.expires_at
          }
        }),

      me: (session) =>
        Effect.gen(function*() {
          const user = yield* store.getUser(session.user_id)
          if (Option.isNone(user)) return yield* unauthorized("Sign in to the dashboard first")
          const organisation = yield* organisationOf(session.organisation_id)
          return {
            user: { id: user.value.id, email: user.value.email, totp_enabled: user.value.totp_enabled },
            organisation: { id: organisation.id, name: organisation.name, plan: organisation.plan },
            role: session.role,
            organisations: yield* organisationsOf(user.value.id),
            csrf_token: session.csrf_token,
            expires_at: session.expires_at
          }
        }),

      switchOrganisation: (session, organisationId) =>
        Effect.gen(function*() {
          const membership = yield* store.getMembership(session.user_id, organisationId)
          if (Option.isNone(membership)) {
            return yield* Errors.fail(
              "not_found_error",
              "resource_not_found",
              "This account is not a member of that organisation",
              "organisation_id"
            )
          }
          if (organisationId !== session.organisation_id) {
            yield* store.setSessionOrganisation(session.session_hash, organisationId)
            yield* provide(
              audit(organisationId, actorOf(session), "session.organisation_switched", session.email, {
                from: session.organisation_id
              })
            )
          }
          return yield* service.me({ ...session, organisation_id: organisationId, role: membership.value.role })
        }),

      signOut: (session) =>
        Effect.zipRight(
          store.deleteSession(session.session_hash),
          provide(audit(session.organisation_id, actorOf(session), "session.signed_out", session.email))
        ),

      totpEnrol: (session) =>
        Effect.gen(function*() {
          const user = yield* store.getUser(session.user_id)
          if (Option.isSome(user) && user.value.totp_enabled) {
            return yield* Errors.fail(
              "conflict_error",
              "invalid_state_transition",
              "Two-factor sign-in is already on; disable it first to enrol another authenticator"
            )
          }
          const secret = new OTPAuth.Secret({ size: 20 }).base32
          const sealed = crypto.encrypt(secret)
          // pending until a code confirms it
          yield* store.setTotp(session.user_id, { secret: sealed.ciphertext, keyId: sealed.keyId }, false)
          yield* provide(audit(session.organisation_id, actorOf(session), "totp.enrolment_started", session.email))
          return { otpauth_uri: totpOf(secret, session.email).toString(), secret }
        }),

      totpConfirm: (session, code) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const user = yield* store.getUser(session.user_id)
          if (Option.isNone(user) || user.value.totp_secret === null || user.value.totp_enabled) {
            return yield* Errors.fail(
              "conflict_error",
              "invalid_state_transition",
              "There is no enrolment to confirm; start one first"
            )
          }
          const secret = crypto.decrypt(user.value.totp_secret, user.value.totp_key_id ?? "")
          const step = totpStep(secret, session.email, code, now)
          if (step === undefined) {
            return yield* Errors.fail("validation_error", "invalid_parameter", "The code is wrong or too old", "code")
          }
          yield* store.setTotp(
            session.user_id,
            { secret: user.value.totp_secret, keyId: user.value.totp_key_id ?? "" },
            true
          )
          yield* store.useTotpStep(session.user_id, step)
          yield* provide(audit(session.organisation_id, actorOf(session), "totp.enabled", session.email))
        }),

      totpDisable: (session, code) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const user = yield* store.getUser(session.user_id)
          if (Option.isNone(user) || user.value.totp_secret === null || !user.value.totp_enabled) {
            return yield* Errors.fail("conflict_error", "invalid_state_transition", "Two-factor sign-in is not on")
          }
          const secret = crypto.decrypt(user.value.totp_secret, user.value.totp_key_id ?? "")
          const step = totpStep(secret, session.email, code, now)
          if (step === undefined || !(yield* store.useTotpStep(session.user_id, step))) {
            return yield* Errors.fail(
              "validation_error",
              "invalid_parameter",
              "The code is wrong, too old or already used",
              "code"
            )
          }
          yield* store.setTotp(session.user_id, null, false)
          yield* provide(audit(session.organisation_id, actorOf(session), "totp.disabled", session.email))
        }),

      members: (session) => Effect.map(store.members(session.organisation_id), (ms) => ms.map(memberView)),

      invite: (session, input, origin) =>
        Effect.gen(function*() {
          yield* requireRole(session, "admin", "Inviting a member")
          if (input.role === "owner") yield* requireRole(session, "owner", "Inviting an owner")
          const { invitation, token } = yield* provide(
            createInvitation(session.organisation_id, input.email, input.role, actorOf(session))
          )
          return {
            id: invitation.id,
            email: invitation.email,
            role: invitation.role,
            expires_at: invitation.expires_at,
            link: acceptLink(origin, token)
          }
        }),

      changeRole: (session, userId, role) =>
        Effect.gen(function*() {
          yield* requireRole(session, "admin", "Changing a role")
          const target = yield* memberOf(session, userId)
          if (target.role === "owner" || role === "owner") {
            yield* requireRole(session, "owner", "Changing an owner's role, or making an owner,")
          }
          const changed = yield* transactions.transaction(Effect.gen(function*() {
            if (
              target.role === "owner" && role !== "owner" && (yield* store.countOwners(session.organisation_id)) <= 1
            ) {
              return false
            }
            yield* store.setRole(userId, session.organisation_id, role)
            yield* provide(
              audit(session.organisation_id, actorOf(session), "member.role_changed", target.email, {
                from: target.role,
                to: role
              })
            )
            return true
          }))
          if (!changed) {
            return yield* Errors.fail(
              "conflict_error",
              "invalid_state_transition",
              "The organisation's last owner cannot be demoted; make another owner first"
            )
          }
          return memberView({ ...target, role })
        }),

      removeMember: (session, userId) =>
        Effect.gen(function*() {
          yield* requireRole(session, "admin", "Removing a member")
          const target = yield* memberOf(session, userId)
          if (target.role === "owner") yield* requireRole(session, "owner", "Removing an owner")
          const removed = yield* transactions.transaction(Effect.gen(function*() {
            if (target.role === "owner" && (yield* store.countOwners(session.organisation_id)) <= 1) return false
            yield* store.deleteMembership(userId, session.organisation_id)
            yield* store.deleteSessionsOf(userId, session.organisation_id)
            yield* provide(
              audit(session.organisation_id, actorOf(session), "member.removed", target.email, { role: target.role })
            )
            return true
          }))
          if (!removed) {
            return yield* Errors.fail(
              "conflict_error",
              "invalid_state_transition",
              "The organisation's last owner cannot be removed; make another owner first"
            )
          }
        }),

      ssoDomains: (session) =>
        Effect.map(provide(SsoDomains.list(session.organisation_id)), (ds) => ds.map(ssoDomainView)),

      addSsoDomain: (session, input) =>
        Effect.gen(function*() {
          yield* requireRole(session, "admin", "Adding a single sign-on domain")
          const role = input.role ?? SsoDomains.DEFAULT_ROLE
          const domain = SsoDomains.normalise(input.domain)
          if (Either.isLeft(domain)) {
            return yield* Errors.fail("validation_error", "invalid_parameter", domain.left, "domain")
          }
          const added = yield* provide(SsoDomains.add(session.organisation_id, domain.right, role, actorOf(session)))
          if (added._tag === "Taken") {
            return yield* Errors.fail(
              "conflict_error",
              "write_conflict",
              added.byThisOrganisation
                ? `${domain.right} is already one of this organisation's single sign-on domains`
                : `${domain.right} is already claimed by another organisation`,
              "domain"
            )
          }
          return ssoDomainView(added.domain)
        }),

      removeSsoDomain: (session, domain) =>
        Effect.gen(function*() {
          yield* requireRole(session, "admin", "Removing a single sign-on domain")
          const normalised = Either.getOrElse(SsoDomains.normalise(domain), () => domain)
          if (!(yield* provide(SsoDomains.remove(session.organisation_id, normalised, actorOf(session))))) {
            return yield* Errors.fail(
              "not_found_error",
              "resource_not_found",
              "No such single sign-on domain in this organisation"
            )
          }
        }),

      audit: (session, page, perPage) =>
        Effect.map(store.listAudit(session.organisation_id, (page - 1) * perPage, perPage + 1), (entries) => ({
          data: entries.slice(0, perPage).map((e) => ({
            id: e.id,
            actor: e.actor_email,
            action: e.action,
            target: e.target,
            detail: e.detail,
            at: e.at
          })),
          page,
          per_page: perPage,
          has_more: entries.length > perPage
        })),

      listKeys: (session) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const clients = yield* accounts.listClients(session.organisation_id)
          const emails = yield* emailsOf(session.organisation_id, clients.map((c) => c.created_by))
          return clients.map((c) => keyView(c, emails, now))
        }),

      createKey: (session) =>
        Effect.gen(function*() {
          yield* requireRole(session, "developer", "Making an API key")
          const created = yield* provide(ApiClients.create(session.organisation_id, { createdBy: session.user_id }))
          yield* provide(audit(session.organisation_id, actorOf(session), "api_key.created", created.client_id))
          return {
            client_id: created.client_id,
            client_secret: created.client_secret,
            previous_secret_expires_at: null
          }
        }),

      rollKey: (session, clientId, expiresInSeconds) =>
        Effect.gen(function*() {
          yield* requireRole(session, "developer", "Rolling an API key")
          const client = yield* clientOf(session, clientId)
          if (client.revoked_at !== null) {
            return yield* Errors.fail("conflict_error", "invalid_state_transition", "The API key is revoked")
          }
          const rolled = yield* provide(ApiClients.rotate(clientId, expiresInSeconds * 1000))
          if (rolled === undefined) {
            return yield* Errors.fail("conflict_error", "invalid_state_transition", "The API key is revoked")
          }
          yield* provide(
            audit(session.organisation_id, actorOf(session), "api_key.rolled", clientId, {
              previous_secret_expires_at: rolled.previous_secret_expires_at
            })
          )
          return rolled
        }),

      revokeKey: (session, clientId) =>
        Effect.gen(function*() {
          yield* requireRole(session, "developer", "Revoking an API key")
          yield* clientOf(session, clientId)
          yield* provide(ApiClients.revoke(clientId))
          yield* provide(audit(session.organisation_id, actorOf(session), "api_key.revoked", clientId))
          const now = yield* Clock.currentTimeMillis
          const client = yield* clientOf(session, clientId)
          return keyView(client, yield* emailsOf(session.organisation_id, [client.created_by]), now)
        }),

      actAs: (session, needed, what) =>
        Effect.gen(function*() {
          yield* requireRole(session, needed, what)
          const organisation = yield* organisationOf(session.organisation_id)
          return {
            organisation,
            kind: "access",
            client_id: null,
            connection_id: null,
            scopes: organisation.plan === "production" ? ["sandbox", "production"] : ["sandbox"]
          }
        }),

      record: (session, action, target, detail) =>
        provide(audit(session.organisation_id, actorOf(session), action, target, detail))
    }
    return service
  })
)
