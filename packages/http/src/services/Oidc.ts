/**
 * The dashboard's single sign-on with any OpenID Connect provider (issue #33, ADR 0029), through
 * `openid-client`: the authorization code flow with PKCE (S256), a `state` and a `nonce`.
 *
 * - **Start:** a fresh PKCE verifier, state and nonce; the state's SHA-256 is stored with the
 *   nonce, the verifier and the redirect URL for 10 minutes, and the state itself goes to the
 *   browser in a short-lived HttpOnly cookie (`tb_sso_state`), so that a callback is accepted only
 *   in the browser that started it, and once.
 * - **Callback:** the state must match the cookie and a stored, unexpired sign-in (taken: it works
 *   once); then openid-client exchanges the code (with the verifier) and verifies the ID token (its
 *   signature against the provider's keys, issuer, audience, expiry and nonce). The e-mail (from the
 *   ID token, else from the userinfo endpoint for the same subject) must be `email_verified: true`.
 *
 * What happens next (the organisation, the session) is `Dashboard.signInFederated`'s. The client
 * secret is `Redacted` until it is handed to openid-client, and is never logged or answered.
 *
 * @since 0.1.0
 */
import { DashboardApi } from "@tracebridge/api"
import { Clock, Context, Effect, Layer, Option, Redacted } from "effect"
import { timingSafeEqual } from "node:crypto"
import * as client from "openid-client"
import * as AppConfig from "../AppConfig.js"
import * as Errors from "../Errors.js"
import { DashboardStore } from "../persistence/DashboardStore.js"
import * as Crypto from "./Crypto.js"

/** The cookie that binds a sign-in under way to its browser. @since 0.1.0 @category constants */
export const STATE_COOKIE = "tb_sso_state"
/** The state cookie's path: the SSO routes only. @since 0.1.0 @category constants */
export const STATE_COOKIE_PATH = `${DashboardApi.PREFIX}/sso`
/** How long a sign-in may take at the provider (ms). @since 0.1.0 @category constants */
export const STATE_TTL_MS = 10 * 60_000
/** The scopes asked for. @since 0.1.0 @category constants */
export const SCOPE = "openid email"

/**
 * Who the provider vouched for.
 *
 * @since 0.1.0
 * @category models
 */
export interface Identity {
  readonly issuer: string
  readonly subject: string
  readonly email: string
}

/**
 * What single sign-on may fail with.
 *
 * @since 0.1.0
 * @category models
 */
export type Failure =
  | Errors.ValidationError
  | Errors.AuthenticationError
  | Errors.PermissionError
  | Errors.InternalError
  | Errors.ServiceUnavailableError

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly enabled: boolean
  /** A new sign-in: the provider's authorization URL to redirect to, and the state for the cookie. */
  readonly start: (origin: string) => Effect.Effect<{ readonly url: string; readonly state: string }, Failure>
  /** Checks the provider's answer (the callback's query) against the state cookie; the verified identity. */
  readonly callback: (query: string, stateCookie: string | undefined) => Effect.Effect<Identity, Failure>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Oidc extends Context.Tag("Services/Oidc")<Oidc, Service>() {}

const notConfigured = Errors.fail(
  "permission_error",
  "capability_not_enabled",
  "Single sign-on (OIDC) is not configured on this server; sign in with your e-mail and password"
)

const Email = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

const same = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** What openid-client threw, in the envelope's words (never the provider's free text, never a secret). */
const refusal = (error: unknown): Effect.Effect<never, Failure> => {
  if (error instanceof client.AuthorizationResponseError) {
    const code = /^[a-z_]{1,64}$/.test(error.error) ? ` (${error.error})` : ""
    return Errors.fail("authentication_error", "unauthorized", `The identity provider refused the sign-in${code}`)
  }
  if (error instanceof client.ResponseBodyError) {
    const code = /^[a-z_]{1,64}$/.test(error.error) ? ` (${error.error})` : ""
    return Errors.fail(
      "authentication_error",
      "unauthorized",
      `The identity provider refused the authorization code${code}; start the sign-in again`
    )
  }
  if (error instanceof TypeError || (error instanceof client.ClientError && error.code === "OAUTH_TIMEOUT")) {
    return Errors.fail("api_error", "service_unavailable", "The identity provider could not be reached; try again")
  }
  return Errors.fail(
    "authentication_error",
    "unauthorized",
    "The identity provider's answer could not be verified; start the sign-in again"
  )
}

/** A refusal for the log: its class, code, message and the claim at fault (never a token or a secret). */
const messageOf = (error: unknown) => {
  if (!(error instanceof Error)) return String(error)
  const { code } = error as { readonly code?: unknown }
  // openid-client wraps oauth4webapi's error, whose cause names the claim that did not match
  let claim = ""
  for (let c: unknown = error, depth = 0; typeof c === "object" && c !== null && depth < 4; depth++) {
    const named = (c as { readonly claim?: unknown }).claim
    if (typeof named === "string") claim = ` (claim ${named})`
    c = (c as { readonly cause?: unknown }).cause
  }
  return `${error.name}${typeof code === "string" ? ` ${code}` : ""}: ${error.message}${claim}`
}

/**
 * The service for a configuration (`None`: single sign-on is off).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Option.Option<AppConfig.OidcOptions>): Effect.Effect<Service, never, DashboardStore> =>
  Effect.gen(function*() {
    const store = yield* DashboardStore
    if (Option.isNone(options)) {
      return { enabled: false, start: () => notConfigured, callback: () => notConfigured }
    }
    const { clientId, clientSecret, issuer, redirectUrl } = options.value
    const insecure = issuer.protocol === "http:"
    const execute = insecure ? [client.allowInsecureRequests] : []
    // discovered at the first sign-in (a provider that is down does not stop the start), kept once it works
    let configuration: client.Configuration | undefined
    const configurationOf = Effect.suspend(() =>
      configuration !== undefined
        ? Effect.succeed(configuration)
        : Effect.tryPromise({
          try: () => client.discovery(issuer, clientId, Redacted.value(clientSecret), undefined, { execute }),
          catch: (error) => error
        }).pipe(
          Effect.tap((found) => Effect.sync(() => (configuration = found))),
          Effect.tapError((error) =>
            Effect.logWarning(`single sign-on: the provider's discovery failed: ${messageOf(error)}`)
          ),
          Effect.orElse(() =>
            Errors.fail(
              "api_error",
              "service_unavailable",
              "The identity provider could not be reached; try again"
            )
          )
        )
    )
    const call = <A>(f: () => Promise<A>) =>
      Effect.tryPromise({ try: f, catch: (error) => error }).pipe(
        Effect.tapError((error) => Effect.logWarning(`single sign-on refused: ${messageOf(error)}`)),
        Effect.catchAll(refusal)
      )

    const service: Service = {
      enabled: true,

      start: (origin) =>
        Effect.gen(function*() {
          const config = yield* configurationOf
          const now = yield* Clock.currentTimeMillis
          const verifier = client.randomPKCECodeVerifier()
          const state = client.randomState()
          const nonce = client.randomNonce()
          const redirectUri = Option.getOrElse(redirectUrl, () => `${origin}${DashboardApi.SSO_CALLBACK_PAGE}`)
          yield* store.insertSsoState({
            state_hash: Crypto.hash(state),
            nonce,
            code_verifier: verifier,
            redirect_uri: redirectUri,
            created_at: now,
            expires_at: now + STATE_TTL_MS
          })
          const challenge = yield* Effect.promise(() => client.calculatePKCECodeChallenge(verifier))
          const url = client.buildAuthorizationUrl(config, {
            redirect_uri: redirectUri,
            scope: SCOPE,
            code_challenge: challenge,
            code_challenge_method: "S256",
            state,
            nonce
          })
          return { url: url.href, state }
        }),

      callback: (query, stateCookie) =>
        Effect.gen(function*() {
          const params = new URLSearchParams(query.startsWith("?") ? query.slice(1) : query)
          const state = params.get("state")
          const refuseState = (message: string) =>
            Errors.fail("validation_error", "invalid_parameter", message, "state")
          if (state === null || state === "") return yield* refuseState("The identity provider's answer has no state")
          if (stateCookie === undefined || !same(stateCookie, state)) {
            return yield* refuseState(
              "This sign-in was not started in this browser (its state does not match); start the sign-in again"
            )
          }
          const now = yield* Clock.currentTimeMillis
          const pending = yield* store.takeSsoState(Crypto.hash(state), now)
          if (Option.isNone(pending)) {
            return yield* refuseState("This sign-in is unknown, already used or expired; start the sign-in again")
          }
          const config = yield* configurationOf
          const callbackUrl = new URL(pending.value.redirect_uri)
          callbackUrl.search = params.toString()
          const tokens = yield* call(() =>
            client.authorizationCodeGrant(config, callbackUrl, {
              pkceCodeVerifier: pending.value.code_verifier,
              expectedState: state,
              expectedNonce: pending.value.nonce,
              idTokenExpected: true
            })
          )
          const claims = tokens.claims()
          if (claims === undefined) return yield* refusal(new Error("no ID token"))
          // the e-mail is in the ID token, or at the userinfo endpoint (for the same subject)
          const info: Readonly<Record<string, unknown>> = claims.email !== undefined
            ? { ...claims }
            : { ...(yield* call(() => client.fetchUserInfo(config, tokens.access_token, claims.sub))) }
          const email = typeof info.email === "string" ? info.email.trim().toLowerCase() : ""
          if (!Email.test(email) || email.length > 254) {
            return yield* Errors.fail(
              "authentication_error",
              "unauthorized",
              "The identity provider gave no e-mail address; it must share the email scope"
            )
          }
          if (info.email_verified !== true && info.email_verified !== "true") {
            return yield* Errors.fail(
              "authentication_error",
              "unauthorized",
              "The identity provider has not verified this e-mail address, so it cannot sign in here"
            )
          }
          return { issuer: claims.iss, subject: claims.sub, email }
        })
    }
    return service
  })

/**
 * The service from the configuration (`AppConfig.oidc`); an invalid configuration stops the start.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Oidc, never, DashboardStore> = Layer.effect(
  Oidc,
  Effect.flatMap(Effect.orDie(AppConfig.oidc), make)
)
