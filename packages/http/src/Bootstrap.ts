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
import * as Crypto from "./services/Crypto.js"

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
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const now = yield* Clock.currentTimeMillis
    const id = fixed?.id ?? Crypto.id("tb_client_")
    const secret = fixed?.secret ?? Crypto.token("tb_secret_")
    yield* accounts.insertClient({
      id,
      organisation_id: organisationId,
      secret_hash: Crypto.hash(secret),
      created_at: now,
      revoked_at: null
    })
    return { client_id: id, client_secret: secret }
  })

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
export const banner = (created: FirstStart): string =>
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
    ]).join("\n") + "\n"
