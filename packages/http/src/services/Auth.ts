/**
 * Tokens and principals: the OAuth client-credentials and refresh grants (refresh tokens rotate;
 * reusing a spent one revokes its family), connection tokens, and the bearer check of every other
 * request. Every token is opaque, prefixed, and stored only as a hash.
 *
 * The organisation's plan and the API client's `revoked_at` are read on every request and every
 * refresh (issue #28): a token's stored scope is what it was granted, and what it may do is that
 * scope within the plan as it is now; a revoked client's access and refresh tokens stop working at
 * once, on every node.
 *
 * @since 0.1.0
 */
import type { Security } from "@tracebridge/api"
import { Clock, Context, Effect, Layer, Option } from "effect"
import * as Errors from "../Errors.js"
import type { ApiClient, Organisation } from "../persistence/Accounts.js"
import { Accounts } from "../persistence/Accounts.js"
import { Tokens } from "../persistence/Tokens.js"
import * as Crypto from "./Crypto.js"

/** Seconds an access token lives. */
export const ACCESS_TTL = 3600
/** Seconds a refresh token lives. */
export const REFRESH_TTL = 30 * 86_400

/**
 * Who is calling (the contract's `Security.Principal`, which the bearer middleware provides).
 *
 * @since 0.1.0
 * @category models
 */
export type Principal = Security.Principal

/**
 * The token endpoint's success body.
 *
 * @since 0.1.0
 * @category models
 */
export interface TokenResponse {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly refresh_token: string
  readonly scope: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly clientCredentials: (
    clientId: string,
    secret: string,
    scope: string | undefined
  ) => Effect.Effect<TokenResponse, Errors.OAuthBadRequest | Errors.OAuthUnauthorized | Errors.OAuthForbidden>
  /**
   * The refresh grant. No client authentication is needed (the spec says so), but a client id or
   * secret that is sent is checked: a wrong secret is `invalid_client`, another client's refresh
   * token `invalid_grant`, and neither spends the refresh token.
   */
  readonly refresh: (
    refreshToken: string,
    scope: string | undefined,
    client?: { readonly id?: string | undefined; readonly secret?: string | undefined }
  ) => Effect.Effect<TokenResponse, Errors.OAuthBadRequest | Errors.OAuthUnauthorized | Errors.OAuthForbidden>
  readonly connectionToken: (organisationId: string, connectionId: string) => Effect.Effect<string>
  readonly authenticate: (bearer: string) => Effect.Effect<Principal, Errors.AuthenticationError>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Auth extends Context.Tag("Services/Auth")<Auth, Service>() {}

/**
 * Refuses a connection token: it reads and writes its own connection only, so link tokens,
 * exchanges, sandbox public tokens and webhooks need the organisation's access token (DECISIONS
 * "Idempotency scope"). 403 `forbidden`.
 *
 * @since 0.1.0
 * @category guards
 */
export const organisationOnly = (principal: Principal, what: string): Effect.Effect<void, Errors.HttpError> =>
  principal.kind === "access"
    ? Effect.void
    : Errors.fail(
      "permission_error",
      "forbidden",
      `${what} need the organisation's access token; a connection token reaches its own connection only`
    )

const scopesFor = (organisation: Organisation): ReadonlyArray<string> =>
  organisation.plan === "production" ? ["sandbox", "production"] : ["sandbox"]

/**
 * What a token's scope grants now: its scopes the organisation's current plan still allows (a
 * downgrade to sandbox takes `production` from every token already issued, at its next request).
 */
const scopesNow = (scope: string, organisation: Organisation): ReadonlyArray<string> => {
  const allowed = scopesFor(organisation)
  return scope.split(" ").filter((s) => s !== "" && allowed.includes(s))
}

/** Whether `secret` is the client's secret, or its previous one before that one's expiry (`rotate-client`). */
const secretMatches = (client: ApiClient, secret: string, now: number): boolean =>
  Crypto.matches(secret, client.secret_hash) ||
  (client.previous_secret_hash !== undefined && client.previous_secret_expires_at !== undefined &&
    now < client.previous_secret_expires_at && Crypto.matches(secret, client.previous_secret_hash))

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(
  Auth,
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const tokens = yield* Tokens

    const grantScope = (organisation: Organisation, requested: string | undefined) => {
      const allowed = scopesFor(organisation)
      if (requested === undefined || requested.trim() === "") return Effect.succeed(allowed.join(" "))
      const asked = requested.trim().split(/\s+/)
      const unknown = asked.find((s) => s !== "sandbox" && s !== "production")
      if (unknown !== undefined) return Effect.fail(Errors.oauth("invalid_scope", `Unknown scope ${unknown}`))
      const denied = asked.find((s) => !allowed.includes(s))
      if (denied !== undefined) {
        return Effect.fail(Errors.oauth("invalid_scope", `The organisation's plan does not grant ${denied}`))
      }
      return Effect.succeed([...new Set(asked)].join(" "))
    }

    const issue = (organisationId: string, clientId: string, scope: string, family: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const access = Crypto.token("tb_at_")
        const refresh = Crypto.token("tb_rt_")
        yield* tokens.insertToken({
          hash: Crypto.hash(access),
          kind: "access",
          organisation_id: organisationId,
          client_id: clientId,
          connection_id: null,
          family,
          scope,
          expires_at: now + ACCESS_TTL * 1000,
          created_at: now,
          used_at: null,
          revoked_at: null
        })
        yield* tokens.insertToken({
          hash: Crypto.hash(refresh),
          kind: "refresh",
          organisation_id: organisationId,
          client_id: clientId,
          connection_id: null,
          family,
          scope,
          expires_at: now + REFRESH_TTL * 1000,
          created_at: now,
          used_at: null,
          revoked_at: null
        })
        // the API Keys page's "last used" (issue #33): when a token was last issued, not every request
        if (clientId !== "") yield* accounts.touchClient(clientId, now)
        return {
          access_token: access,
          token_type: "Bearer" as const,
          expires_in: ACCESS_TTL,
          refresh_token: refresh,
          scope
        }
      })

    const clientOf = (clientId: string, secret: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const client = yield* accounts.getClient(clientId)
        if (
          Option.isNone(client) || client.value.revoked_at !== null || !secretMatches(client.value, secret, now)
        ) {
          return yield* Effect.fail(Errors.oauth("invalid_client", "Unknown client or wrong secret"))
        }
        const organisation = yield* accounts.getOrganisation(client.value.organisation_id)
        if (Option.isNone(organisation)) {
          return yield* Effect.fail(Errors.oauth("invalid_client", "Unknown client or wrong secret"))
        }
        return { client: client.value, organisation: organisation.value }
      })

    const service: Service = {
      clientCredentials: (clientId, secret, scope) =>
        Effect.gen(function*() {
          const { client, organisation } = yield* clientOf(clientId, secret)
          const granted = yield* grantScope(organisation, scope)
          return yield* issue(organisation.id, client.id, granted, Crypto.id("fam_"))
        }),
      refresh: (refreshToken, scope, client = {}) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const stored = yield* tokens.getToken(Crypto.hash(refreshToken))
          if (client.secret !== undefined) {
            // Authenticate the client first (a wrong secret is the client's fault, whatever the token).
            const clientId = client.id ?? (Option.isSome(stored) ? stored.value.client_id ?? "" : "")
            yield* clientOf(clientId, client.secret)
          }
          if (Option.isNone(stored) || stored.value.kind !== "refresh") {
            return yield* Effect.fail(Errors.oauth("invalid_grant", "Unknown refresh token"))
          }
          const token = stored.value
          if (client.id !== undefined && client.id !== token.client_id) {
            return yield* Effect.fail(Errors.oauth("invalid_grant", "The refresh token was issued to another client"))
          }
          if (token.revoked_at !== null) {
            return yield* Effect.fail(Errors.oauth("invalid_grant", "The refresh token was revoked"))
          }
          if (token.expires_at !== null && token.expires_at <= now) {
            return yield* Effect.fail(Errors.oauth("invalid_grant", "The refresh token has expired"))
          }
          // The client and the plan as they are now (issue #28): a revoked client's refresh tokens
          // are dead, and a refresh grants only what the plan allows today.
          if (token.client_id !== null && token.client_id !== "") {
            const issuedTo = yield* accounts.getClient(token.client_id)
            if (Option.isNone(issuedTo) || issuedTo.value.revoked_at !== null) {
              return yield* Effect.fail(Errors.oauth("invalid_grant", "The client of this refresh token was revoked"))
            }
          }
          const first = yield* tokens.useToken(token.hash, now)
          if (!first) {
            // A refresh token used twice: someone holds a copy. Revoke the whole family.
            yield* tokens.revokeFamily(token.family ?? token.hash, now)
            return yield* Effect.fail(
              Errors.oauth("invalid_grant", "The refresh token was already used; its family is revoked")
            )
          }
          const organisation = yield* accounts.getOrganisation(token.organisation_id)
          if (Option.isNone(organisation)) {
            return yield* Effect.fail(Errors.oauth("invalid_grant", "Unknown organisation"))
          }
          const granted = scope === undefined
            ? scopesNow(token.scope, organisation.value).join(" ")
            : yield* grantScope(organisation.value, scope)
          if (!granted.split(" ").every((s) => token.scope.split(" ").includes(s))) {
            return yield* Effect.fail(Errors.oauth("invalid_scope", "A refresh cannot widen the scope"))
          }
          return yield* issue(token.organisation_id, token.client_id ?? "", granted, token.family ?? Crypto.id("fam_"))
        }),
      connectionToken: (organisationId, connectionId) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const token = Crypto.token("tb_ct_")
          yield* tokens.insertToken({
            hash: Crypto.hash(token),
            kind: "connection",
            organisation_id: organisationId,
            client_id: null,
            connection_id: connectionId,
            family: null,
            scope: "",
            expires_at: null,
            created_at: now,
            used_at: null,
            revoked_at: null
          })
          return token
        }),
      authenticate: (bearer) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const stored = bearer.trim() === "" ? Option.none() : yield* tokens.getToken(Crypto.hash(bearer.trim()))
          if (Option.isNone(stored) || stored.value.kind === "refresh" || stored.value.revoked_at !== null) {
            return yield* Errors.fail(
              "authentication_error",
              "unauthorized",
              "The bearer token is missing, unknown or revoked"
            )
          }
          const token = stored.value
          if (token.expires_at !== null && token.expires_at <= now) {
            return yield* Errors.fail(
              "authentication_error",
              "token_expired",
              "The access token has expired; request a new one"
            )
          }
          const organisation = yield* accounts.getOrganisation(token.organisation_id)
          if (Option.isNone(organisation)) {
            return yield* Errors.fail(
              "authentication_error",
              "unauthorized",
              "The bearer token is missing, unknown or revoked"
            )
          }
          // An access token of a revoked client is dead at its next request (issue #28). The client
          // row is read on every request (behind `RowCache`, emptied by any commit on SQLite, by a
          // new row generation on Postgres, both checked on every request).
          if (token.client_id !== null && token.client_id !== "") {
            const client = yield* accounts.getClient(token.client_id)
            if (Option.isNone(client) || client.value.revoked_at !== null) {
              return yield* Errors.fail(
                "authentication_error",
                "unauthorized",
                "The bearer token is missing, unknown or revoked"
              )
            }
          }
          return {
            organisation: organisation.value,
            kind: token.kind === "connection" ? "connection" as const : "access" as const,
            client_id: token.client_id === "" ? null : token.client_id,
            connection_id: token.connection_id,
            // the plan as it is now, never as it was when the token was issued
            scopes: token.kind === "connection"
              ? scopesFor(organisation.value)
              : scopesNow(token.scope, organisation.value)
          }
        }) as Effect.Effect<Principal, Errors.AuthenticationError>
    }
    return service
  })
)
