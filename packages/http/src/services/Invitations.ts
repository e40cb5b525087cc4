/**
 * Dashboard invitations and the audit log (issue #33), apart from the rest of the dashboard's
 * service so that the operator CLI (`invite`) and the first start load no HTTP code: an invitation
 * is a one-time token (`tbi_…`, stored as its SHA-256) to join an organisation with a role, valid
 * 7 days; every change writes an audit entry.
 *
 * @since 0.1.0
 */
import { Clock, Effect } from "effect"
import { randomBytes } from "node:crypto"
import type { Role } from "../persistence/DashboardStore.js"
import { DashboardStore } from "../persistence/DashboardStore.js"
import * as Crypto from "./Crypto.js"

/** How long an invitation link works (ms). @since 0.1.0 @category constants */
export const INVITATION_TTL_MS = 7 * 86_400_000

// ---------------------------------------------------------------------------------------------

/**
 * The one-time link of an invitation token.
 *
 * @since 0.1.0
 * @category invitations
 */
export const acceptLink = (origin: string, token: string) =>
  `${origin}/dashboard/accept?token=${encodeURIComponent(token)}`

/**
 * Makes an invitation to an organisation (e-mail null: whoever accepts names it, as the first
 * start's owner link does); returns its token once (stored as a hash).
 *
 * @since 0.1.0
 * @category invitations
 */
export const createInvitation = (
  organisationId: string,
  email: string | null,
  role: Role,
  invitedBy: { readonly id: string; readonly email: string } | null
) =>
  Effect.gen(function*() {
    const store = yield* DashboardStore
    const now = yield* Clock.currentTimeMillis
    const token = Crypto.token("tbi_")
    const invitation = {
      id: Crypto.id("inv_"),
      token_hash: Crypto.hash(token),
      organisation_id: organisationId,
      email: email === null ? null : email.toLowerCase(),
      role,
      invited_by: invitedBy?.id ?? null,
      created_at: now,
      expires_at: now + INVITATION_TTL_MS,
      used_at: null
    }
    yield* store.insertInvitation(invitation)
    yield* audit(organisationId, invitedBy, "member.invited", invitation.email, { role, invitation_id: invitation.id })
    return { token, invitation }
  })

let auditSequence = 0

/**
 * Writes an audit entry: who (a user, or null for the operator CLI and the first start), what,
 * on what, when; `detail` never holds a secret.
 *
 * @since 0.1.0
 * @category audit
 */
export const audit = (
  organisationId: string,
  actor: { readonly id: string; readonly email: string } | null,
  action: string,
  target: string | null,
  detail: Record<string, unknown> = {}
) =>
  Effect.gen(function*() {
    const store = yield* DashboardStore
    const at = yield* Clock.currentTimeMillis
    // ordered within one millisecond by this process's sequence
    auditSequence = (auditSequence + 1) % 1_000_000
    const id = `aud_${String(at).padStart(15, "0")}${String(auditSequence).padStart(6, "0")}${
      randomBytes(4).toString("hex")
    }`
    yield* store.insertAudit({
      id,
      organisation_id: organisationId,
      actor_id: actor?.id ?? null,
      actor_email: actor?.email ?? null,
      action,
      target,
      detail,
      at
    })
  })
