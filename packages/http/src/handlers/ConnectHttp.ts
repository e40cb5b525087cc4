/**
 * @since 0.1.0
 */
import { HttpApiBuilder } from "@effect/platform"
import { ProviderDescriptor } from "@tracebridge/core"
import { Registry } from "@tracebridge/sandbox"
import { Clock, Effect, Option } from "effect"
import { Api } from "../Api.js"
import * as Errors from "../Errors.js"
import { Accounts } from "../persistence/Accounts.js"
import { ConnectionStore } from "../persistence/ConnectionStore.js"
import type { LinkToken } from "../persistence/LinkTokens.js"
import { LinkTokens } from "../persistence/LinkTokens.js"
import * as RedirectUri from "../RedirectUri.js"
import { Connections } from "../services/Connections.js"
import * as Crypto from "../services/Crypto.js"
import { Providers } from "../services/Providers.js"
import * as Envelope from "./envelope.js"

/** A link token the page may use: known, unexpired and unused; its own code and text otherwise. */
const openLinkToken = (token: string) =>
  Effect.gen(function*() {
    const connections = yield* Connections
    const linkTokens = yield* LinkTokens
    const now = yield* Clock.currentTimeMillis
    const stored = yield* connections.getLinkToken(token)
    if (Option.isNone(stored)) {
      return yield* Errors.fail(
        "validation_error",
        "link_token_invalid",
        "This link is not valid. Ask the app to start linking again.",
        "link_token"
      )
    }
    if (stored.value.expires_at <= now) {
      return yield* Errors.fail(
        "validation_error",
        "link_token_expired",
        "This link has expired (links last 4 hours). Ask the app to start linking again.",
        "link_token"
      )
    }
    if (yield* linkTokens.linkTokenUsed(stored.value.hash)) {
      return yield* Errors.fail(
        "validation_error",
        "link_token_used",
        "This link was already used. Ask the app to start linking again.",
        "link_token"
      )
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
    return stored.value
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
        const link = yield* openLinkToken(urlParams.link_token)
        const providers = yield* Providers
        const connectionStore = yield* ConnectionStore
        const sandbox = link.environment === "sandbox"
        const accounts = yield* Accounts
        const organisationOf = yield* accounts.getOrganisation(link.organisation_id)
        const clientName = link.client_name ??
          Option.match(organisationOf, {
            onNone: () => "",
            onSome: (o) => o.name
          })
        let update: { provider: string; state: string } | null = null
        if (link.connection_id !== null) {
          const connection = yield* connectionStore.getConnection(link.connection_id)
          if (Option.isSome(connection)) update = { provider: connection.value.provider, state: connection.value.state }
        }
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
        const link = yield* openLinkToken(payload.link_token)
        const connections = yield* Connections
        const accounts = yield* Accounts
        const connectionStore = yield* ConnectionStore
        const linkTokens = yield* LinkTokens
        const now = yield* Clock.currentTimeMillis
        let linked: { readonly public_token: string }
        if (link.connection_id !== null) {
          const connection = yield* connectionStore.getConnection(link.connection_id)
          if (Option.isNone(connection) || connection.value.organisation_id !== link.organisation_id) {
            return yield* Errors.fail(
              "validation_error",
              "link_token_invalid",
              "This link is not valid. Ask the app to start linking again.",
              "link_token"
            )
          }
          linked = yield* connections.relink(connection.value, payload.credentials, link.state)
        } else {
          const organisation = yield* accounts.getOrganisation(link.organisation_id)
          if (Option.isNone(organisation)) {
            return yield* Errors.fail(
              "validation_error",
              "link_token_invalid",
              "This link is not valid. Ask the app to start linking again.",
              "link_token"
            )
          }
          linked = yield* connections.link({ organisation: organisation.value }, {
            provider: payload.provider,
            state: payload.state,
            credentials: payload.credentials,
            sandbox: link.environment === "sandbox",
            external_id: link.external_id,
            client_state: link.state
          })
        }
        yield* linkTokens.useLinkToken(link.hash, now)
        return yield* Envelope.one({
          public_token: linked.public_token,
          redirect_uri: redirectFor(link, linked.public_token, payload.link_session_id, payload.provider, payload.state)
        })
      })))
