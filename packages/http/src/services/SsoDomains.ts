/**
 * The e-mail domains an organisation claims for single sign-on (issue #33, ADR 0029): a person
 * whose identity provider vouches for an e-mail of a claimed domain (`email_verified`) joins the
 * organisation at their first SSO sign-in, with the mapping's role. A domain belongs to one
 * organisation at most. Managed by owners and admins from the dashboard, and by the operator CLI
 * (`sso-domain add|list|remove`); apart from the dashboard's service so that the CLI loads no HTTP
 * code. Every change writes an audit entry.
 *
 * @since 0.1.0
 */
import { Clock, Effect, Either, Option } from "effect"
import type { Role, SsoDomain } from "../persistence/DashboardStore.js"
import { DashboardStore } from "../persistence/DashboardStore.js"
import { audit } from "./Invitations.js"

/**
 * The roles a domain may give: never owner (an owner is always named by another owner).
 *
 * @since 0.1.0
 * @category constants
 */
export const ROLES: ReadonlyArray<Role> = ["admin", "developer", "viewer"]

/**
 * The role a mapping gives when none is named.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_ROLE: Role = "developer"

const label = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/**
 * A domain as stored: lower case, no trailing dot, at least two labels of letters, digits and
 * hyphens (an internationalised domain in its `xn--` form); Left with the reason otherwise.
 *
 * @since 0.1.0
 * @category domains
 */
export const normalise = (text: string): Either.Either<string, string> => {
  const domain = text.trim().toLowerCase().replace(/\.$/, "")
  const labels = domain.split(".")
  return domain.length <= 253 && labels.length >= 2 && labels.every((l) => label.test(l)) &&
      !/^\d+$/.test(labels[labels.length - 1]!)
    ? Either.right(domain)
    : Either.left(`"${text}" is not an e-mail domain (such as example.com)`)
}

/**
 * The domain of an e-mail address (lower case).
 *
 * @since 0.1.0
 * @category domains
 */
export const domainOf = (email: string): string => email.slice(email.lastIndexOf("@") + 1).toLowerCase()

/**
 * What adding a domain did.
 *
 * @since 0.1.0
 * @category models
 */
export type Added =
  | { readonly _tag: "Added"; readonly domain: SsoDomain }
  | { readonly _tag: "Taken"; readonly byThisOrganisation: boolean }

/**
 * Claims a (normalised) domain for an organisation with a role; audited (`sso_domain.added`).
 *
 * @since 0.1.0
 * @category domains
 */
export const add = (
  organisationId: string,
  domain: string,
  role: Role,
  actor: { readonly id: string; readonly email: string } | null
): Effect.Effect<Added, never, DashboardStore> =>
  Effect.gen(function*() {
    const store = yield* DashboardStore
    const now = yield* Clock.currentTimeMillis
    const row: SsoDomain = {
      domain,
      organisation_id: organisationId,
      role,
      created_by: actor?.id ?? null,
      created_at: now
    }
    if (!(yield* store.insertSsoDomain(row))) {
      const holder = yield* store.getSsoDomain(domain)
      return {
        _tag: "Taken",
        byThisOrganisation: Option.isSome(holder) && holder.value.organisation_id === organisationId
      } as const
    }
    yield* audit(organisationId, actor, "sso_domain.added", domain, { role })
    return { _tag: "Added", domain: row } as const
  })

/**
 * An organisation's domains, by name.
 *
 * @since 0.1.0
 * @category domains
 */
export const list = (organisationId: string) =>
  Effect.flatMap(DashboardStore, (store) => store.ssoDomainsOf(organisationId))

/**
 * Gives up an organisation's claim on a domain (false: it claims no such domain); audited
 * (`sso_domain.removed`). Members who joined by it stay members.
 *
 * @since 0.1.0
 * @category domains
 */
export const remove = (
  organisationId: string,
  domain: string,
  actor: { readonly id: string; readonly email: string } | null
): Effect.Effect<boolean, never, DashboardStore> =>
  Effect.gen(function*() {
    const store = yield* DashboardStore
    if (!(yield* store.deleteSsoDomain(organisationId, domain))) return false
    yield* audit(organisationId, actor, "sso_domain.removed", domain)
    return true
  })
