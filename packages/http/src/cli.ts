#!/usr/bin/env node
/**
 * The operator CLI (`npm run admin -- <command>` at the repository root, or `tracebridge-admin`),
 * against the same database as the server (`DATABASE_URL` or `TRACEBRIDGE_DATA_DIR`):
 *
 *   create-org <name> [--plan sandbox|production]   create an organisation
 *   create-client <organisation_id>                 create an API client; prints the secret once
 *   revoke-client <client_id>                       revoke an API client: its secret, access tokens and
 *                                                   refresh tokens stop working at their next use
 *   rotate-client <client_id> [--expires-in 24h]    give an API client a new secret, printed once; the
 *                                                   old one keeps working until the expiry (s, m, h or d;
 *                                                   default 24h, 0 ends it at once), then only the new one
 *   set-plan <organisation_id> sandbox|production   switch an organisation's plan (every existing token
 *                                                   gets the new plan's scopes at its next request)
 *   set-redirect-origins <organisation_id> [<origin>...]
 *                                                   replace the organisation's allowed redirect origins
 *                                                   (none: any origin its plan allows; ADR 0019)
 *   invite <organisation_id> <email> [--role owner|admin|developer|viewer]
 *                                                   invite a member to the organisation's dashboard
 *                                                   (default role: developer); prints a one-time link,
 *                                                   <public origin>/dashboard/accept?token=…, valid 7 days
 *   sso-domain add <organisation_id> <domain> [--role admin|developer|viewer]
 *                                                   claim an e-mail domain for the dashboard's single
 *                                                   sign-on: a verified e-mail of it joins the
 *                                                   organisation with the role (default developer)
 *   sso-domain list <organisation_id>               the organisation's single sign-on domains
 *   sso-domain remove <organisation_id> <domain>    give a domain up (its members stay)
 *   list-orgs                                       list organisations
 *   list-connections <organisation_id>              list an organisation's connections
 *   reencrypt                                       re-encrypt every stored ciphertext under the current
 *                                                   key (TRACEBRIDGE_ENCRYPTION_KEY), reading older ones
 *                                                   with TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS; prints counts
 *                                                   and the ids of rows it cannot decrypt (exit code 1)
 */
import { NodeRuntime } from "@effect/platform-node"
import * as RedirectUri from "@tracebridge/api/RedirectUri"
import { Effect, Either, Layer, Option } from "effect"
import * as Bootstrap from "./Bootstrap.js"
import { Accounts } from "./persistence/Accounts.js"
import { ConnectionStore } from "./persistence/ConnectionStore.js"
import * as Database from "./persistence/Database.js"
import * as ApiClients from "./services/ApiClients.js"
import * as Crypto from "./services/Crypto.js"
import * as KeyRotation from "./services/KeyRotation.js"
import * as SsoDomains from "./services/SsoDomains.js"

const [command, ...args] = process.argv.slice(2)
const out = (line: string) => Effect.sync(() => process.stdout.write(`${line}\n`))
const usage =
  "usage: tracebridge-admin create-org <name> [--plan sandbox|production] | create-client <organisation_id> | revoke-client <client_id> | rotate-client <client_id> [--expires-in 24h] | set-plan <organisation_id> sandbox|production | set-redirect-origins <organisation_id> [<origin>...] | invite <organisation_id> <email> [--role owner|admin|developer|viewer] | sso-domain add <organisation_id> <domain> [--role admin|developer|viewer] | sso-domain list <organisation_id> | sso-domain remove <organisation_id> <domain> | list-orgs | list-connections <organisation_id> | reencrypt"

/** A duration such as `90s`, `30m`, `24h` or `7d`, in milliseconds; undefined when malformed. */
const durationMs = (text: string): number | undefined => {
  const match = /^(\d+)([smhd])$/.exec(text.trim())
  if (match === null) return text.trim() === "0" ? 0 : undefined
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as "s" | "m" | "h" | "d"]
  return Number(match[1]) * unit
}

const program = Effect.gen(function*() {
  const accounts = yield* Accounts
  const connectionStore = yield* ConnectionStore
  switch (command) {
    case "create-org": {
      const name = args[0]
      const planIndex = args.indexOf("--plan")
      const plan = planIndex >= 0 ? args[planIndex + 1] : "sandbox"
      if (name === undefined || (plan !== "sandbox" && plan !== "production")) return yield* Effect.fail(usage)
      const organisation = yield* Bootstrap.createOrganisation(name, plan)
      return yield* out(`${organisation.id}\t${organisation.name}\t${organisation.plan}`)
    }
    case "create-client": {
      const id = args[0]
      if (id === undefined || Option.isNone(yield* accounts.getOrganisation(id))) {
        return yield* Effect.fail(`no organisation ${id ?? ""}`)
      }
      const client = yield* Bootstrap.createClient(id)
      yield* out(`client_id=${client.client_id}`)
      return yield* out(`client_secret=${client.client_secret}   (shown once; stored only as a hash)`)
    }
    case "revoke-client": {
      const id = args[0]
      if (id === undefined) return yield* Effect.fail(usage)
      if (!(yield* ApiClients.revoke(id))) return yield* Effect.fail(`no client ${id}`)
      return yield* out(`${id}\trevoked`)
    }
    case "rotate-client": {
      const id = args[0]
      const flag = args.indexOf("--expires-in")
      const grace = flag >= 0 ? durationMs(args[flag + 1] ?? "") : 24 * 3_600_000
      if (id === undefined || id.startsWith("--") || grace === undefined) return yield* Effect.fail(usage)
      const rotated = yield* ApiClients.rotate(id, grace)
      if (rotated === undefined) return yield* Effect.fail(`no client ${id} (or it is revoked)`)
      yield* out(`client_id=${id}`)
      yield* out(`client_secret=${rotated.client_secret}   (shown once; stored only as a hash)`)
      return yield* out(`previous_secret_expires_at=${new Date(rotated.previous_secret_expires_at).toISOString()}`)
    }
    case "set-plan": {
      const [id, plan] = args
      if (id === undefined || (plan !== "sandbox" && plan !== "production")) return yield* Effect.fail(usage)
      if (!(yield* accounts.setPlan(id, plan))) return yield* Effect.fail(`no organisation ${id}`)
      return yield* out(`${id}\t${plan}`)
    }
    case "set-redirect-origins": {
      const [id, ...given] = args
      if (id === undefined) return yield* Effect.fail(usage)
      const origins: Array<string> = []
      for (const raw of given) {
        const origin = RedirectUri.parseOrigin(raw)
        if (Either.isLeft(origin)) return yield* Effect.fail(origin.left)
        origins.push(origin.right)
      }
      if (!(yield* accounts.setRedirectOrigins(id, origins))) return yield* Effect.fail(`no organisation ${id}`)
      return yield* out(`${id}\t${origins.length === 0 ? "(any origin)" : origins.join(" ")}`)
    }
    case "invite": {
      const [id, email] = args
      const flag = args.indexOf("--role")
      const role = flag >= 0 ? args[flag + 1] : "developer"
      if (
        id === undefined || email === undefined || email.startsWith("--") ||
        !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) ||
        (role !== "owner" && role !== "admin" && role !== "developer" && role !== "viewer")
      ) return yield* Effect.fail(usage)
      const invited = yield* Bootstrap.invite(id, email, role)
      yield* out(
        `invitation for ${email.toLowerCase()} as ${role}, valid until ${new Date(invited.expires_at).toISOString()}:`
      )
      return yield* out(`${invited.link}   (one-time link; shown once)`)
    }
    case "sso-domain": {
      const [action, id, given] = args
      if (id === undefined || id.startsWith("--")) return yield* Effect.fail(usage)
      if (Option.isNone(yield* accounts.getOrganisation(id))) return yield* Effect.fail(`no organisation ${id}`)
      if (action === "list") {
        for (const d of yield* SsoDomains.list(id)) yield* out(`${d.domain}\t${d.role}`)
        return
      }
      if ((action !== "add" && action !== "remove") || given === undefined || given.startsWith("--")) {
        return yield* Effect.fail(usage)
      }
      const domain = SsoDomains.normalise(given)
      if (Either.isLeft(domain)) return yield* Effect.fail(domain.left)
      if (action === "remove") {
        if (!(yield* SsoDomains.remove(id, domain.right, null))) {
          return yield* Effect.fail(`${domain.right} is not a single sign-on domain of ${id}`)
        }
        return yield* out(`${domain.right}\tremoved`)
      }
      const flag = args.indexOf("--role")
      const role = flag >= 0 ? args[flag + 1] : SsoDomains.DEFAULT_ROLE
      if (role !== "admin" && role !== "developer" && role !== "viewer") return yield* Effect.fail(usage)
      const added = yield* SsoDomains.add(id, domain.right, role, null)
      if (added._tag === "Taken") {
        return yield* Effect.fail(
          added.byThisOrganisation
            ? `${domain.right} is already a single sign-on domain of ${id}`
            : `${domain.right} is already claimed by another organisation`
        )
      }
      return yield* out(`${domain.right}\t${role}`)
    }
    case "list-orgs":
      for (const o of yield* accounts.listOrganisations()) yield* out(`${o.id}\t${o.name}\t${o.plan}`)
      return
    case "list-connections": {
      const id = args[0]
      if (id === undefined) return yield* Effect.fail(usage)
      const { items } = yield* connectionStore.listConnections(id, 0, 10_000)
      for (const c of items) {
        yield* out(
          `${c.id}\t${c.provider}\t${c.state}\t${c.status}\t${c.is_sandbox ? "sandbox" : "production"}\t${
            c.external_id ?? ""
          }`
        )
      }
      return
    }
    case "reencrypt": {
      const report = yield* Effect.provide(KeyRotation.reencrypt, Crypto.layer)
      yield* out(
        `reencrypted=${report.reencrypted} skipped=${report.skipped} failed=${report.failed.length} key_id=${report.keyId}`
      )
      for (const f of report.failed) yield* out(`failed\t${f.column}\t${f.id}\t${f.reason}`)
      if (report.failed.length > 0) yield* Effect.sync(() => (process.exitCode = 1))
      return
    }
    default:
      return yield* Effect.fail(usage)
  }
})

program.pipe(
  Effect.provide(Layer.orDie(Database.layer)),
  Effect.catchAll((message) =>
    Effect.sync(() => {
      process.stderr.write(`${message}\n`)
      process.exitCode = 2
    })
  ),
  NodeRuntime.runMain
)
