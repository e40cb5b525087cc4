/**
 * First start: with no organisation in the database, a sandbox organisation and an API client are
 * created and their credentials returned once, for printing. `TRACEBRIDGE_CLIENT_ID` and
 * `TRACEBRIDGE_CLIENT_SECRET` fix those credentials for scripted use.
 *
 * @since 0.1.0
 */
import { Clock, Effect, Option, Redacted } from "effect"
import * as AppConfig from "./AppConfig.js"
import { Repo } from "./persistence/Repo.js"
import * as Crypto from "./services/Crypto.js"

/**
 * Creates an organisation.
 *
 * @since 0.1.0
 * @category operations
 */
export const createOrganisation = (name: string, plan: "sandbox" | "production" = "sandbox") =>
  Effect.gen(function*() {
    const repo = yield* Repo
    const now = yield* Clock.currentTimeMillis
    const organisation = { id: Crypto.id("org_"), name, plan, created_at: now }
    yield* repo.insertOrganisation(organisation)
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
    const repo = yield* Repo
    const now = yield* Clock.currentTimeMillis
    const id = fixed?.id ?? Crypto.id("tb_client_")
    const secret = fixed?.secret ?? Crypto.token("tb_secret_")
    yield* repo.insertClient({
      id,
      organisation_id: organisationId,
      secret_hash: Crypto.hash(secret),
      created_at: now,
      revoked_at: null
    })
    return { client_id: id, client_secret: secret }
  })

/**
 * Makes sure a first organisation and client exist; returns the credentials when it created them.
 *
 * @since 0.1.0
 * @category operations
 */
export const ensureSandboxClient = Effect.gen(function*() {
  const repo = yield* Repo
  const fixed = yield* AppConfig.bootstrapClient
  if (Option.isSome(fixed.id)) {
    const existing = yield* repo.getClient(fixed.id.value)
    if (Option.isSome(existing)) return Option.none()
    const organisation = (yield* repo.listOrganisations())[0] ?? (yield* createOrganisation("Sandbox organisation"))
    const secret = Option.isSome(fixed.secret) ? Redacted.value(fixed.secret.value) : Crypto.token("tb_secret_")
    return Option.some(yield* createClient(organisation.id, { id: fixed.id.value, secret }))
  }
  if ((yield* repo.listOrganisations()).length > 0) return Option.none()
  const organisation = yield* createOrganisation("Sandbox organisation")
  return Option.some(yield* createClient(organisation.id))
})
