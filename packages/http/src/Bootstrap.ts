/**
 * First start: with no organisation in the database, a sandbox organisation and an API client are
 * created and their credentials returned once, for printing. `TRACEBRIDGE_CLIENT_ID` and
 * `TRACEBRIDGE_CLIENT_SECRET` fix those credentials for scripted use. The banner shows a secret it
 * generated, once; a secret from `TRACEBRIDGE_CLIENT_SECRET` is never printed (it is named instead).
 *
 * @since 0.1.0
 */
import type { ConfigError } from "effect"
import { Clock, Effect, Option, Redacted } from "effect"
import * as AppConfig from "./AppConfig.js"
import { Accounts } from "./persistence/Accounts.js"
import type { Role } from "./persistence/DashboardStore.js"
import * as ApiClients from "./services/ApiClients.js"
import * as Crypto from "./services/Crypto.js"
import * as Invitations from "./services/Invitations.js"

/**
 * Creates an organisation.
 *
 * @since 0.1.0
 * @category operations
 */
export const createOrganisation = (name: string, plan: "sandbox" | "production" = "sandbox") =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const now = yield* Clock.currentTimeMillis
    const organisation = { id: Crypto.id("org_"), name, plan, created_at: now }
    yield* accounts.insertOrganisation(organisation)
    return organisation
  })

/**
 * Creates an API client of an organisation; the secret is returned once and stored as a hash.
 *
 * @since 0.1.0
 * @category operations
 */
export const createClient = (organisationId: string, fixed?: { readonly id: string; readonly secret: string }) =>
  Effect.map(
    ApiClients.create(organisationId, fixed === undefined ? {} : { fixed }),
    ({ client_id, client_secret }) => ({ client_id, client_secret })
  )

/**
 * The client `npm start` created on first start: its credentials, and whether the secret was
 * generated (and so may be shown, once) or came from `TRACEBRIDGE_CLIENT_SECRET` (never shown).
 *
 * @since 0.1.0
 * @category models
 */
export interface FirstStart {
  readonly client_id: string
  readonly client_secret: string
  readonly secretSource: "generated" | "environment"
}

/**
 * Makes sure a first organisation and client exist; returns the client when it created it.
 * `TRACEBRIDGE_CLIENT_ID` fixes the id (the client is created unless a client of that id exists);
 * `TRACEBRIDGE_CLIENT_SECRET` fixes the secret of the client created.
 *
 * @since 0.1.0
 * @category operations
 */
export const firstStart: Effect.Effect<Option.Option<FirstStart>, ConfigError.ConfigError, Accounts> = Effect.gen(
  function*() {
    const accounts = yield* Accounts
    const fixed = yield* AppConfig.bootstrapClient
    const secret = Option.map(fixed.secret, Redacted.value)
    const secretSource = Option.isSome(secret) ? "environment" as const : "generated" as const
    const create = (organisationId: string, id: string) =>
      Effect.map(
        createClient(organisationId, { id, secret: Option.getOrElse(secret, () => Crypto.token("tb_secret_")) }),
        (client): FirstStart => ({ ...client, secretSource })
      )
    if (Option.isSome(fixed.id)) {
      const existing = yield* accounts.getClient(fixed.id.value)
      if (Option.isSome(existing)) return Option.none()
      const organisation = (yield* accounts.listOrganisations())[0] ??
        (yield* createOrganisation("Sandbox organisation"))
      return Option.some(yield* create(organisation.id, fixed.id.value))
    }
    if ((yield* accounts.listOrganisations()).length > 0) return Option.none()
    const organisation = yield* createOrganisation("Sandbox organisation")
    return Option.some(yield* create(organisation.id, Crypto.id("tb_client_")))
  }
)

/**
 * Makes sure a first organisation and client exist; returns the credentials when it created them.
 *
 * @since 0.1.0
 * @category operations
 */
export const ensureSandboxClient = Effect.map(
  firstStart,
  Option.map(({ client_id, client_secret }) => ({ client_id, client_secret }))
)

/**
 * What `npm start` prints after creating the first client: the id, and the secret only when it was
 * generated (it is stored as a hash and never shown again). A secret from
 * `TRACEBRIDGE_CLIENT_SECRET` is named, not printed: the process output may go to a log.
 *
 * @since 0.1.0
 * @category operations
 */
export const banner = (created: FirstStart, ownerLink?: string): string =>
  (created.secretSource === "generated"
    ? [
      "",
      "A sandbox organisation and API client were created. Keep these; the secret is not shown again:",
      `  TRACEBRIDGE_CLIENT_ID=${created.client_id}`,
      `  TRACEBRIDGE_CLIENT_SECRET=${created.client_secret}`,
      ""
    ]
    : [
      "",
      "A sandbox organisation and API client were created:",
      `  TRACEBRIDGE_CLIENT_ID=${created.client_id}`,
      "  with the secret from TRACEBRIDGE_CLIENT_SECRET (not printed)",
      ""
    ]).concat(
      ownerLink === undefined ? [] : [
        "Open this link once to become the organisation's first owner in the dashboard (valid 7 days):",
        `  ${ownerLink}`,
        ""
      ]
    ).join("\n") + "\n"

/**
 * Where links printed by the CLI and the banner point: `TRACEBRIDGE_PUBLIC_URL`, else
 * `http://HOST:PORT` (a wildcard host reads as 127.0.0.1).
 *
 * @since 0.1.0
 * @category operations
 */
export const publicOrigin: Effect.Effect<string, ConfigError.ConfigError> = Effect.gen(function*() {
  const configured = yield* AppConfig.publicUrl
  if (Option.isSome(configured)) return configured.value
  const { host, port } = yield* AppConfig.server
  const shown = host === "0.0.0.0" || host === "::" || host === ""
    ? "127.0.0.1"
    : host.includes(":")
    ? `[${host}]`
    : host
  return `http://${shown}:${port}`
})

/**
 * An invitation to an organisation's dashboard (`npm run admin -- invite`): its one-time link
 * (`<public origin>/dashboard/accept?token=…`; the token is stored as a hash) and when it expires.
 * `email` null: whoever accepts names the e-mail. Fails with a message when there is no such
 * organisation.
 *
 * @since 0.1.0
 * @category operations
 */
export const invite = (organisationId: string, email: string | null, role: Role) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    if (Option.isNone(yield* accounts.getOrganisation(organisationId))) {
      return yield* Effect.fail(`no organisation ${organisationId}`)
    }
    const origin = yield* Effect.mapError(publicOrigin, (e) => `configuration: ${e.message}`)
    const { invitation, token } = yield* Invitations.createInvitation(organisationId, email, role, null)
    return { link: Invitations.acceptLink(origin, token), expires_at: invitation.expires_at }
  })

/**
 * The first start's owner link: an invitation, for any e-mail, to be the owner of the
 * organisation of the client the first start made.
 *
 * @since 0.1.0
 * @category operations
 */
export const firstOwnerLink = (clientId: string) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const client = yield* accounts.getClient(clientId)
    if (Option.isNone(client)) return undefined
    return (yield* invite(client.value.organisation_id, null, "owner")).link
  })
