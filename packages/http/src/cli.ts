#!/usr/bin/env node
/**
 * The operator CLI (`npm run admin -- <command>` at the repository root, or `tracebridge-admin`),
 * against the same database as the server (`DATABASE_URL` or `TRACEBRIDGE_DATA_DIR`):
 *
 *   create-org <name> [--plan sandbox|production]   create an organisation
 *   create-client <organisation_id>                 create an API client; prints the secret once
 *   set-plan <organisation_id> sandbox|production   switch an organisation's plan
 *   set-redirect-origins <organisation_id> [<origin>...]
 *                                                   replace the organisation's allowed redirect origins
 *                                                   (none: any origin its plan allows; ADR 0019)
 *   list-orgs                                       list organisations
 *   list-connections <organisation_id>              list an organisation's connections
 *   reencrypt                                       re-encrypt every stored ciphertext under the current
 *                                                   key (TRACEBRIDGE_ENCRYPTION_KEY), reading older ones
 *                                                   with TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS; prints counts
 *                                                   and the ids of rows it cannot decrypt (exit code 1)
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Either, Layer, Option } from "effect"
import * as Bootstrap from "./Bootstrap.js"
import { Accounts } from "./persistence/Accounts.js"
import { ConnectionStore } from "./persistence/ConnectionStore.js"
import * as Database from "./persistence/Database.js"
import * as RedirectUri from "./RedirectUri.js"
import * as Crypto from "./services/Crypto.js"
import * as KeyRotation from "./services/KeyRotation.js"

const [command, ...args] = process.argv.slice(2)
const out = (line: string) => Effect.sync(() => process.stdout.write(`${line}\n`))
const usage =
  "usage: tracebridge-admin create-org <name> [--plan sandbox|production] | create-client <organisation_id> | set-plan <organisation_id> sandbox|production | set-redirect-origins <organisation_id> [<origin>...] | list-orgs | list-connections <organisation_id> | reencrypt"

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
