/**
 * The operations on an API client that both the operator CLI (`create-client`, `revoke-client`,
 * `rotate-client`) and the dashboard's API Keys page run (issue #33): one code path each.
 *
 * - revoke: the client's `revoked_at` is set and its access and refresh tokens are marked revoked.
 *   `Auth` reads the client on every request and refresh, so its tokens stop working at once, on
 *   every node;
 * - rotate (the page's "roll"): a new secret, returned once and stored as a hash; the old one keeps
 *   working until the expiry given, then only the new one.
 *
 * @since 0.1.0
 */
import { Clock, Effect } from "effect"
import { Accounts } from "../persistence/Accounts.js"
import { Tokens } from "../persistence/Tokens.js"
import * as Crypto from "./Crypto.js"

/**
 * Creates an API client of an organisation; the secret is returned once and stored as a hash.
 * `createdBy` is the dashboard user who made it (none for the CLI and the first start).
 *
 * @since 0.1.0
 * @category operations
 */
export const create = (
  organisationId: string,
  options: { readonly fixed?: { readonly id: string; readonly secret: string }; readonly createdBy?: string } = {}
) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const now = yield* Clock.currentTimeMillis
    const id = options.fixed?.id ?? Crypto.id("tb_client_")
    const secret = options.fixed?.secret ?? Crypto.token("tb_secret_")
    yield* accounts.insertClient({
      id,
      organisation_id: organisationId,
      secret_hash: Crypto.hash(secret),
      created_at: now,
      revoked_at: null,
      ...(options.createdBy === undefined ? {} : { created_by: options.createdBy })
    })
    return { client_id: id, client_secret: secret, created_at: now }
  })

/**
 * Revokes a client and its tokens; false when there is no such client.
 *
 * @since 0.1.0
 * @category operations
 */
export const revoke = (clientId: string) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const tokens = yield* Tokens
    const now = yield* Clock.currentTimeMillis
    if (!(yield* accounts.revokeClient(clientId, now))) return false
    // the client's revoked_at alone ends its tokens (read on every request); they are marked too
    yield* tokens.revokeClientTokens(clientId, now)
    return true
  })

/**
 * Gives an unrevoked client a new secret; the old one works for `graceMs` more. None when there
 * is no such unrevoked client.
 *
 * @since 0.1.0
 * @category operations
 */
export const rotate = (clientId: string, graceMs: number) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const now = yield* Clock.currentTimeMillis
    const secret = Crypto.token("tb_secret_")
    const previousExpiresAt = now + graceMs
    if (!(yield* accounts.rotateClient(clientId, Crypto.hash(secret), previousExpiresAt))) {
      return undefined
    }
    return { client_id: clientId, client_secret: secret, previous_secret_expires_at: previousExpiresAt }
  })
