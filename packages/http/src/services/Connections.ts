/**
 * Links and connections: link tokens, public tokens and their exchange, the sandbox shortcut that
 * links without the widget, and the connection lifecycle (`pending` → `active` after the first
 * facility sync, `error` when the provider refuses the login, `inactive` once deleted), every move
 * through the core transition table.
 *
 * @since 0.1.0
 */
import * as RedirectUri from "@tracebridge/api/RedirectUri"
import type { Connection as CoreConnection, ProviderError, ProviderName } from "@tracebridge/core"
import { Capabilities, Deadline, Ids, Page, Transitions, WebhookEvent as WebhookEvents } from "@tracebridge/core"
import { Jobs, SyncStore } from "@tracebridge/sync"
import { Clock, Context, Effect, Either, Layer, Option } from "effect"
import * as Errors from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import type { Connection } from "../persistence/ConnectionStore.js"
import { ConnectionStore } from "../persistence/ConnectionStore.js"
import type { LinkToken } from "../persistence/LinkTokens.js"
import { LinkTokens } from "../persistence/LinkTokens.js"
import { Tokens } from "../persistence/Tokens.js"
import { Auth } from "./Auth.js"
import * as AuthModule from "./Auth.js"
import type { Principal } from "./Auth.js"
import * as Crypto from "./Crypto.js"
import { Providers } from "./Providers.js"
import { Webhooks } from "./Webhooks.js"

/** Link tokens live 4 hours; public tokens 30 minutes. */
export const LINK_TTL = 4 * 3_600_000
export const PUBLIC_TTL = 30 * 60_000

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly createLinkToken: (
    principal: Principal,
    body: {
      readonly metadata?: Readonly<Record<string, unknown>> | undefined
      readonly redirect_uri?: string | undefined
      readonly state?: string | undefined
      readonly external_id?: string | undefined
      readonly connection_id?: string | undefined
      readonly client_name?: string | undefined
      readonly logo_url?: string | undefined
    },
    /** `sandbox`: a sandbox link token whatever the plan (the dashboard's Connect preview). */
    options?: { readonly sandbox?: boolean }
  ) => Effect.Effect<{ readonly link_token: string; readonly expires_at: string }, Errors.HttpError>
  readonly getLinkToken: (token: string) => Effect.Effect<Option.Option<LinkToken>>
  /** Links a login: checks it with the provider, stores the connection, syncs facilities, returns a public token. */
  readonly link: (
    principal: Pick<Principal, "organisation">,
    options: {
      readonly provider: string
      readonly state: string
      readonly credentials: Readonly<Record<string, string>>
      readonly sandbox: boolean
      readonly external_id: string | null
      readonly client_state: string | null
    }
  ) => Effect.Effect<{ readonly public_token: string; readonly connection: Connection }, Errors.HttpError>
  readonly exchange: (principal: Principal, publicToken: string) => Effect.Effect<{
    readonly connection_id: string
    readonly connection_token?: string
    readonly provider: ProviderName.ProviderName
    readonly state: ProviderName.UsState
    readonly status: CoreConnection.ConnectionStatus
    readonly client_state?: string
  }, Errors.HttpError>
  readonly list: (principal: Principal, page: Page.PageRequest) => Effect.Effect<Page.Page<CoreConnection.Connection>>
  /** A connection the principal may reach: another organisation's is 404, another connection's token 403. */
  readonly authorize: (principal: Principal, connectionId: string) => Effect.Effect<Connection, Errors.HttpError>
  readonly view: (connection: Connection) => Effect.Effect<CoreConnection.Connection>
  readonly remove: (
    principal: Principal,
    connectionId: string
  ) => Effect.Effect<CoreConnection.Connection, Errors.HttpError>
  /**
   * Update mode: checks a re-entered login for an existing connection, stores it, moves the
   * connection back to `active`, and returns a public token for the same connection. A connection
   * disconnected meanwhile is refused (`link_token_invalid`) and keeps no login.
   */
  readonly relink: (
    connection: Connection,
    credentials: Readonly<Record<string, string>>,
    clientState: string | null
  ) => Effect.Effect<{ readonly public_token: string; readonly connection: Connection }, Errors.HttpError>
  /** Moves a connection's status through the transition table (no-op when already there). */
  readonly moveTo: (connection: Connection, status: Connection["status"]) => Effect.Effect<Connection>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Connections extends Context.Tag("Services/Connections")<Connections, Service>() {}

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(
  Connections,
  Effect.gen(function*() {
    const connectionStore = yield* ConnectionStore
    const linkTokens = yield* LinkTokens
    const tokens = yield* Tokens
    const auth = yield* Auth
    const providers = yield* Providers
    const crypto = yield* Crypto.Crypto
    const webhooks = yield* Webhooks
    const jobs = yield* Jobs.Jobs
    const syncStore = yield* SyncStore.SyncStore

    const view = (connection: Connection) =>
      Effect.gen(function*() {
        const port = yield* providers.port(connection.provider, true)
        const capabilities = Option.isNone(port)
          ? undefined
          : yield* Effect.option(port.value.capabilities(connection.state))
        return {
          id: connection.id as CoreConnection.Connection["id"],
          external_id: connection.external_id,
          provider: connection.provider as ProviderName.ProviderName,
          state: connection.state as ProviderName.UsState,
          status: connection.status,
          is_sandbox: connection.is_sandbox,
          capabilities: capabilities !== undefined && Option.isSome(capabilities)
            ? capabilities.value
            : Capabilities.make(false)
        }
      })

    const moveTo = (connection: Connection, status: Connection["status"]) =>
      Effect.gen(function*() {
        if (connection.status === status) return connection
        if (!Transitions.canTransition(Transitions.connectionStatus, connection.status, status)) return connection
        const now = yield* Clock.currentTimeMillis
        const patch = { status, updated_at: now, ...(status === "inactive" ? { credentials: null, key_id: null } : {}) }
        yield* connectionStore.updateConnection(connection.id, patch)
        if (status === "error") {
          // the state system refused the stored login: the integrator hears it without a failed read
          yield* webhooks.enqueue(
            connection.organisation_id,
            connection.id,
            WebhookEvents.make("connection.login_required", WebhookEvents.envelope(Crypto.id("evt_"), now), {
              connection_id: Ids.ConnectionId.make(connection.id)
            })
          )
        }
        if (status === "inactive") yield* syncStore.dropConnection(connection.id)
        return { ...connection, ...patch }
      })

    const providerError = (error: ProviderError.ProviderError, param: string) =>
      error._tag === "ProviderLoginRequired"
        ? error.reason === "account_locked" || /lock/i.test(error.message)
          ? Errors.make(
            "validation_error",
            "account_locked",
            "This account is locked. Unlock it with the state system, then try again.",
            "credentials"
          )
          : Errors.make(
            "validation_error",
            "invalid_credentials",
            "The state system did not accept this login. Check it and try again.",
            "credentials"
          )
        : error._tag === "UnsupportedState"
        ? Errors.make("validation_error", "invalid_parameter", error.message, "state")
        : error._tag === "InvalidInput"
        ? Errors.make("validation_error", "invalid_parameter", error.message, param)
        : Errors.fromProviderError(error)

    const service: Service = {
      createLinkToken: (principal, body, options) =>
        Effect.gen(function*() {
          yield* AuthModule.organisationOnly(principal, "Link tokens")
          // issue #28: the redirect URI is checked against the plan and allow-list before anything is stored
          const redirectRefused = body.redirect_uri === undefined
            ? undefined
            : RedirectUri.refusal(body.redirect_uri, principal.organisation)
          if (redirectRefused !== undefined) {
            return yield* Errors.fail("validation_error", "invalid_parameter", redirectRefused, "redirect_uri")
          }
          if (body.connection_id !== undefined) {
            const existing = yield* service.authorize(principal, body.connection_id)
            // a disconnected connection's login is erased for good: link the user again instead
            if (existing.status === "inactive") {
              return yield* Errors.fail(
                "conflict_error",
                "connection_inactive",
                "This connection was disconnected; update mode cannot reopen it. Create a link token without connection_id to link the user again."
              )
            }
          }
          yield* Idempotency.authorised
          const now = yield* Clock.currentTimeMillis
          const environment = principal.organisation.plan === "production" && options?.sandbox !== true
            ? "production"
            : "sandbox"
          const token = Crypto.token(`link-${environment}-`)
          yield* linkTokens.insertLinkToken({
            hash: Crypto.hash(token),
            organisation_id: principal.organisation.id,
            environment,
            metadata: JSON.stringify(body.metadata ?? {}),
            redirect_uri: body.redirect_uri ?? null,
            state: body.state ?? null,
            external_id: body.external_id ?? null,
            connection_id: body.connection_id ?? null,
            // the call's own values, else the organisation's Connect defaults (the dashboard's
            // Connect page), else its name and no logo
            client_name: body.client_name ?? principal.organisation.connect_client_name ?? principal.organisation.name,
            logo_url: body.logo_url ?? principal.organisation.connect_logo_url ?? null,
            expires_at: now + LINK_TTL,
            created_at: now
          })
          return { link_token: token, expires_at: iso(now + LINK_TTL) }
        }),
      getLinkToken: (token) => linkTokens.getLinkToken(Crypto.hash(token)),
      link: (principal, options) =>
        Effect.gen(function*() {
          const port = yield* providers.port(options.provider, options.sandbox)
          if (Option.isNone(port)) {
            return yield* Errors.fail(
              "validation_error",
              "invalid_parameter",
              `Unknown provider ${options.provider}`,
              "provider"
            )
          }
          const now = yield* Clock.currentTimeMillis
          if (!options.sandbox && !crypto.configured) {
            return yield* Errors.fail(
              "api_error",
              "internal_error",
              "This server cannot store production logins: its operator must set TRACEBRIDGE_ENCRYPTION_KEY"
            )
          }
          const id = Crypto.id("conn_")
          const session = providers.draftSession({
            key: id,
            provider: options.provider as ProviderName.ProviderName,
            state: options.state as ProviderName.UsState,
            sandbox: options.sandbox,
            credentials: options.credentials
          })
          yield* port.value.capabilities(options.state).pipe(
            Effect.catchAll((e) => Effect.flatMap(providerError(e, "state"), Effect.fail))
          )
          yield* providers.upstream(options.provider, port.value.checkCredentials(session)).pipe(
            Effect.catchAll((e) => Effect.flatMap(providerError(e, "credentials"), Effect.fail))
          )
          const sealed = crypto.encrypt(JSON.stringify(options.credentials))
          const pending: Connection = {
            id,
            organisation_id: principal.organisation.id,
            provider: options.provider,
            state: options.state,
            status: "pending",
            is_sandbox: options.sandbox,
            external_id: options.external_id,
            credentials: sealed.ciphertext,
            key_id: sealed.keyId,
            token_issued: false,
            created_at: now,
            updated_at: now,
            sandbox_version: 0,
            sandbox_fault: null
          }
          yield* connectionStore.insertConnection(pending)
          // The first facility sync decides: active, or error when the login is refused (pending
          // when the state system failed or did not answer within what is left of the deadline).
          const synced = yield* Effect.either(
            providers.upstream(options.provider, port.value.listFacilities(session, Page.firstPage))
          )
          // A production connection stays pending until the managed sync's first backfill of every
          // facility is done (the sync moves it to active); a sandbox one is active at once.
          const connection = yield* moveTo(
            pending,
            Either.isRight(synced)
              ? (options.sandbox ? "active" : "pending")
              : synced.left._tag === "ProviderLoginRequired"
              ? "error"
              : "pending"
          )
          // Production facilities start their backfill now; a sandbox connection's start with its
          // first feed or sync-status call (most sandbox connections never use the feed).
          if (Either.isRight(synced) && !options.sandbox) {
            yield* jobs.start(connection.id, synced.right.items.map((f) => f.id))
          }
          const publicToken = Crypto.token(`public-${options.sandbox ? "sandbox" : "production"}-`)
          yield* linkTokens.insertPublicToken({
            hash: Crypto.hash(publicToken),
            organisation_id: principal.organisation.id,
            connection_id: connection.id,
            client_state: options.client_state,
            expires_at: now + PUBLIC_TTL,
            created_at: now,
            used_at: null
          })
          return { public_token: publicToken, connection }
        }).pipe(
          // The login check and the first sync share the request's one upstream deadline.
          Deadline.withBudget(providers.deadline)
        ),
      exchange: (principal, publicToken) =>
        Effect.gen(function*() {
          yield* AuthModule.organisationOnly(principal, "Exchanges")
          yield* Idempotency.authorised
          const now = yield* Clock.currentTimeMillis
          const hash = Crypto.hash(publicToken)
          const stored = yield* linkTokens.getPublicToken(hash)
          const invalid = (message: string) =>
            Errors.fail("validation_error", "invalid_parameter", message, "public_token")
          if (Option.isNone(stored) || stored.value.organisation_id !== principal.organisation.id) {
            return yield* invalid("Unknown public token")
          }
          if (stored.value.used_at !== null) return yield* invalid("This public token was already exchanged")
          if (stored.value.expires_at <= now) {
            return yield* invalid("This public token has expired (they live 30 minutes)")
          }
          const first = yield* linkTokens.usePublicToken(hash, now)
          if (!first) return yield* invalid("This public token was already exchanged")
          const connection = yield* connectionStore.getConnection(stored.value.connection_id)
          if (Option.isNone(connection)) return yield* invalid("Unknown public token")
          let connectionToken: string | undefined
          if (!connection.value.token_issued) {
            connectionToken = yield* auth.connectionToken(principal.organisation.id, connection.value.id)
            yield* connectionStore.updateConnection(connection.value.id, { token_issued: true, updated_at: now })
          }
          return {
            connection_id: connection.value.id,
            ...(connectionToken === undefined ? {} : { connection_token: connectionToken }),
            provider: connection.value.provider as ProviderName.ProviderName,
            state: connection.value.state as ProviderName.UsState,
            status: connection.value.status,
            ...(stored.value.client_state === null ? {} : { client_state: stored.value.client_state })
          }
        }),
      list: (principal, page) =>
        Effect.gen(function*() {
          const window = Page.toWindow(page)
          const { items, total } = yield* connectionStore.listConnections(
            principal.organisation.id,
            window.offset,
            window.limit
          )
          const scoped = principal.connection_id === null
            ? items
            : items.filter((c) => c.id === principal.connection_id)
          const views = yield* Effect.forEach(scoped, view)
          return Page.fromSlice(page, { items: views, total: principal.connection_id === null ? total : views.length })
        }),
      authorize: (principal, connectionId) =>
        Effect.gen(function*() {
          const connection = yield* connectionStore.getConnection(connectionId)
          if (Option.isNone(connection) || connection.value.organisation_id !== principal.organisation.id) {
            return yield* Errors.fail("not_found_error", "resource_not_found", `No connection with id ${connectionId}`)
          }
          if (principal.connection_id !== null && principal.connection_id !== connectionId) {
            return yield* Errors.fail(
              "permission_error",
              "forbidden",
              "This connection token is for another connection"
            )
          }
          return connection.value
        }),
      view,
      remove: (principal, connectionId) =>
        Effect.gen(function*() {
          const connection = yield* service.authorize(principal, connectionId)
          const now = yield* Clock.currentTimeMillis
          const removed = yield* moveTo(connection, "inactive")
          // an inactive connection keeps no login, however one got there (a DELETE of a connection
          // already inactive erases one too)
          yield* connectionStore.eraseInactiveLogin(connection.id)
          yield* tokens.revokeConnectionTokens(connection.id, now)
          return yield* view(removed)
        }),
      relink: (connection, credentials, clientState) =>
        Effect.gen(function*() {
          const port = yield* providers.port(connection.provider, connection.is_sandbox)
          if (Option.isNone(port)) {
            return yield* Errors.fail(
              "validation_error",
              "invalid_parameter",
              `Unknown provider ${connection.provider}`,
              "provider"
            )
          }
          const session = providers.draftSession({
            key: connection.id,
            provider: connection.provider as ProviderName.ProviderName,
            state: connection.state as ProviderName.UsState,
            sandbox: connection.is_sandbox,
            credentials
          })
          const check = providers.upstream(connection.provider, port.value.checkCredentials(session))
          // A sandbox `expired_login` fault is the stored login expiring: the login entered again
          // replaces it, as a fresh key does upstream (issue #33), so it is lifted for the check; a
          // refused login replaces nothing, and the fault is put back.
          const fault = connection.is_sandbox ? providers.state.faultOf(connection) : undefined
          const expired = fault?.kind === "expired_login" ? fault : undefined
          if (expired !== undefined) yield* providers.state.setFault(connection, null)
          yield* (connection.is_sandbox && connection.credentials !== null
            // Entering the login again is what a pending `connection_login_required` refusal waits
            // for: it is lifted, then the login is checked; a refused login lifts nothing (issue #30).
            ? providers.state.write(connection, () =>
              Effect.zipRight(
                Effect.sync(() => {
                  const world = providers.state.world(connection)
                  if (world.loginRequired === true) providers.sandbox.apply(world, { _tag: "RenewLogin" })
                }),
                check
              ))
            : check).pipe(
              Effect.tapError(() =>
                expired === undefined ? Effect.void : providers.state.setFault(connection, expired)
              ),
              Effect.catchAll((e) =>
                e._tag === "ConflictError"
                  ? Effect.fail(e)
                  : Effect.flatMap(providerError(e, "credentials"), Effect.fail)
              )
            )
          const now = yield* Clock.currentTimeMillis
          const sealed = crypto.encrypt(JSON.stringify(credentials))
          const status = connection.status === "active" ||
              Transitions.canTransition(Transitions.connectionStatus, connection.status, "active")
            ? "active" as const
            : connection.status
          // The login and the status in one statement, refused once the connection is inactive: a
          // disconnect during the login check leaves no login behind (issue #28).
          const stored = yield* connectionStore.storeLogin(connection.id, {
            credentials: sealed.ciphertext,
            key_id: sealed.keyId,
            status,
            updated_at: now
          })
          if (!stored) {
            return yield* Errors.fail(
              "validation_error",
              "link_token_invalid",
              "This connection was disconnected. Ask the app to start linking again.",
              "link_token"
            )
          }
          const relinked: Connection = {
            ...connection,
            credentials: sealed.ciphertext,
            key_id: sealed.keyId,
            status,
            updated_at: now
          }
          // a new login: the sync reads every facility again (a new generation)
          const synced = yield* syncStore.facilities(connection.id)
          yield* jobs.start(connection.id, synced.map((f) => f.facility_id), { newGeneration: true })
          const publicToken = Crypto.token(`public-${connection.is_sandbox ? "sandbox" : "production"}-`)
          yield* linkTokens.insertPublicToken({
            hash: Crypto.hash(publicToken),
            organisation_id: connection.organisation_id,
            connection_id: connection.id,
            client_state: clientState,
            expires_at: now + PUBLIC_TTL,
            created_at: now,
            used_at: null
          })
          return { public_token: publicToken, connection: relinked }
        }),
      moveTo
    }
    return service
  })
)
