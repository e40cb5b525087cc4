/**
 * @since 0.1.0
 */
import { HttpApiBuilder } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import * as RedirectUri from "@tracebridge/api/RedirectUri"
import { ProviderDescriptor } from "@tracebridge/core"
import { Registry } from "@tracebridge/sandbox"
import { Clock, Effect, Option } from "effect"
import * as Errors from "../Errors.js"
import { Accounts } from "../persistence/Accounts.js"
import { ConnectionStore } from "../persistence/ConnectionStore.js"
import type { Connection } from "../persistence/ConnectionStore.js"
import type { LinkToken } from "../persistence/LinkTokens.js"
import { LinkTokens } from "../persistence/LinkTokens.js"
import { Connections } from "../services/Connections.js"
import * as Crypto from "../services/Crypto.js"
import { Providers } from "../services/Providers.js"
import * as Envelope from "./envelope.js"

const usedLink = Errors.fail(
  "validation_error",
  "link_token_used",
  "This link was already used. Ask the app to start linking again.",
  "link_token"
)

const invalidLink = (message = "This link is not valid. Ask the app to start linking again.") =>
  Errors.fail("validation_error", "link_token_invalid", message, "link_token")

/**
 * A link token the page may use: known, unexpired and unused, and in update mode for a connection
 * of its organisation that is not disconnected; its own code and text otherwise.
 */
const openLinkToken = (token: string) =>
  Effect.gen(function*() {
    const connections = yield* Connections
    const linkTokens = yield* LinkTokens
    const connectionStore = yield* ConnectionStore
    const now = yield* Clock.currentTimeMillis
    const stored = yield* connections.getLinkToken(token)
    if (Option.isNone(stored)) return yield* invalidLink()
    if (stored.value.expires_at <= now) {
      return yield* Errors.fail(
        "validation_error",
        "link_token_expired",
        "This link has expired (links last 4 hours). Ask the app to start linking again.",
        "link_token"
      )
    }
    if (yield* linkTokens.linkTokenUsed(stored.value.hash)) return yield* usedLink
    let update: Connection | null = null
    if (stored.value.connection_id !== null) {
      const connection = yield* connectionStore.getConnection(stored.value.connection_id)
      if (Option.isNone(connection) || connection.value.organisation_id !== stored.value.organisation_id) {
        return yield* invalidLink()
      }
      if (connection.value.status === "inactive") {
        return yield* invalidLink("This account was disconnected. Ask the app to start linking again.")
      }
      update = connection.value
    }
    // issue #28: a stored redirect_uri that does not parse (one from before it was checked) makes
    // the link unusable here, before anything is linked, rather than a 500 after
    if (stored.value.redirect_uri !== null && !RedirectUri.isWellFormed(stored.value.redirect_uri)) {
      yield* Effect.logWarning("link token with an unusable redirect_uri").pipe(
        Effect.annotateLogs({ organisation_id: stored.value.organisation_id })
      )
      return yield* Errors.fail(
        "validation_error",
        "link_token_invalid",
        "This link's return address is not valid. Ask the app to start linking again.",
        "link_token"
      )
    }
    return { link: stored.value, update }
  })

const redirectFor = (
  link: LinkToken,
  publicToken: string,
  linkSessionId: string | undefined,
  provider: string,
  state: string
) => {
  if (link.redirect_uri === null) return null
  const url = new URL(link.redirect_uri)
  url.searchParams.set("public_token", publicToken)
  if (link.state !== null) url.searchParams.set("state", link.state)
  if (linkSessionId !== undefined) url.searchParams.set("link_session_id", linkSessionId)
  url.searchParams.set("provider", provider)
  url.searchParams.set("state_code", state)
  return url.toString()
}

/** Redirect mode: where the page returns to when the user leaves, the link token's `state` added. */
const exitUri = (link: LinkToken) => {
  if (link.redirect_uri === null) return null
  const url = new URL(link.redirect_uri)
  if (link.state !== null) url.searchParams.set("state", link.state)
  return url.toString()
}

/**
 * @since 0.1.0
 * @category layers
 */
export const HttpConnectLive = HttpApiBuilder.group(Api, "connect", (handlers) =>
  handlers
    .handle("connectSession", ({ urlParams }) =>
      Effect.gen(function*() {
        const { link, update: updated } = yield* openLinkToken(urlParams.link_token)
        const providers = yield* Providers
        const sandbox = link.environment === "sandbox"
        const accounts = yield* Accounts
        const organisationOf = yield* accounts.getOrganisation(link.organisation_id)
        const clientName = link.client_name ??
          Option.match(organisationOf, {
            onNone: () => "",
            onSome: (o) => o.name
          })
        const update = updated === null ? null : { provider: updated.provider, state: updated.state }
        return yield* Envelope.one({
          link_session_id: Crypto.id("lks_"),
          environment: link.environment,
          redirect: link.redirect_uri !== null,
          exit_uri: exitUri(link),
          client_name: clientName,
          logo_url: link.logo_url,
          frame_ancestors: RedirectUri.frameAncestors({
            sandbox,
            redirectUri: link.redirect_uri,
            allowedOrigins: Option.match(organisationOf, { onNone: () => [], onSome: (o) => o.redirect_origins ?? [] })
          }),
          update,
          providers: providers.descriptors.map((d) => ({
            name: d.name,
            display_name: d.displayName,
            states: [...ProviderDescriptor.states(d)],
            credential_fields: d.credentialFields.map((f) => ({
              name: f.name,
              label: f.label,
              secret: f.secret,
              ...(f.description ? { description: f.description } : {})
            })),
            ...(sandbox ? { test_login: Registry.get(d.name).logins.good } : {})
          }))
        })
      }))
    .handle("connectSubmit", ({ payload }) =>
      Effect.gen(function*() {
        const { link, update } = yield* openLinkToken(payload.link_token)
        const connections = yield* Connections
        const accounts = yield* Accounts
        const linkTokens = yield* LinkTokens
        const organisation = yield* accounts.getOrganisation(link.organisation_id)
        if (Option.isNone(organisation)) return yield* invalidLink()
        // One atomic claim before the slow link (issue #28): of concurrent submits of one link
        // token, exactly one goes on; the others are `link_token_used`.
        const claimedAt = yield* Clock.currentTimeMillis
        if (!(yield* linkTokens.useLinkToken(link.hash, claimedAt))) return yield* usedLink
        const linked = yield* (update !== null
          ? connections.relink(update, payload.credentials, link.state)
          : connections.link({ organisation: organisation.value }, {
            provider: payload.provider,
            state: payload.state,
            credentials: payload.credentials,
            sandbox: link.environment === "sandbox",
            external_id: link.external_id,
            client_state: link.state
          })).pipe(
            // A refused submit (a wrong login, a timeout of the state system, an unknown state)
            // stores nothing: the claim is given back so the user may type the login again, as
            // Plaid Link lets them. A submit that stored a connection never gives it back.
            Effect.tapError(() => linkTokens.releaseLinkToken(link.hash, claimedAt))
          )
        return yield* Envelope.one({
          public_token: linked.public_token,
          redirect_uri: redirectFor(link, linked.public_token, payload.link_session_id, payload.provider, payload.state)
        })
      })))
