/**
 * The dashboard's Connect and Sandbox pages' API (issue #33):
 *
 * - Connect defaults: every role reads them, admin and up change them (audited); bad input is 400
 *   in the envelope naming the field; `POST /v1/link/token/create` uses them when the call names no
 *   `client_name` or `logo_url` of its own (the call's own win); another organisation's are its
 *   own; the preview is a sandbox link token (whatever the plan) that opens with them.
 * - Sandbox tools: a sandbox connection made with a test login; simulate, reset, set, read and
 *   clear a fault through `/v1/sandbox`'s own code (the same answers, events and status moves);
 *   a viewer reads only; a production connection is refused; another organisation's is 404.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap, Http, Server } from "@tracebridge/http"
import { Effect, Layer, Option, TestClock } from "effect"
import { Accounts } from "../src/persistence/Accounts.js"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import * as Crypto from "../src/services/Crypto.js"
import { clientFor, firstOwner, invited, type Member, ownerWithKey, raw } from "./support/Dashboard.js"
import { call, linkSandbox } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

const app = Http.makeHttpLive({ worker: false }).pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

/** Tests start on a realistic day (the sandbox dates worlds from the clock). */
const T0 = Date.parse("2026-01-15T12:00:00.000Z")

const SETTINGS = "/dashboard/api/connect/settings"

/** The Connect page's session of a link token: what the widget shows. */
const widget = (linkToken: string) =>
  Effect.map(
    call("GET", `/connect/session?link_token=${encodeURIComponent(linkToken)}`),
    (answer) => answer.body.data as { client_name: string; logo_url: string | null; environment: string }
  )

const linkToken = (access: string, json: Record<string, unknown> = {}) =>
  Effect.map(
    call("POST", "/v1/link/token/create", { token: access, json }),
    (answer) => answer.body.data.link_token as string
  )

/** The audit log's actions, newest first. */
const auditOf = (member: Member) =>
  Effect.map(
    raw("GET", "/dashboard/api/audit?per_page=100", { cookie: member.cookie }),
    (answer) => answer.body.data as Array<{ action: string; target: string | null; detail: any; actor: string }>
  )

/** Four members of one organisation: the owner (with an API key), an admin, a developer, a viewer. */
const team = Effect.gen(function*() {
  const start = yield* ownerWithKey
  const admin = yield* invited(start.owner, "admin@example.com", "admin")
  const developer = yield* invited(start.owner, "developer@example.com", "developer")
  const viewer = yield* invited(start.owner, "viewer@example.com", "viewer")
  return { ...start, admin, developer, viewer }
})

describe("Dashboard Connect settings", () => {
  it.scoped("every role reads; admin and up change them, audited; bad input is 400 naming the field", () =>
    Effect.gen(function*() {
      const { admin, developer, owner, viewer } = yield* team
      const organisation = (yield* (yield* clientFor(owner)).session.me()).organisation

      // never set: the organisation's name, no logo
      for (const member of [owner, admin, developer, viewer]) {
        const read = yield* raw("GET", SETTINGS, { cookie: member.cookie })
        assert.strictEqual(read.status, 200, member.email)
        assert.deepStrictEqual(read.body, {
          client_name: null,
          logo_url: null,
          organisation_name: organisation.name,
          updated_at: null
        })
      }

      const body = { client_name: "Green Leaf", logo_url: "https://greenleaf.example/logo.png" }
      for (const member of [developer, viewer]) {
        const refused = yield* raw("PUT", SETTINGS, { cookie: member.cookie, csrf: member.csrf, json: body })
        assert.strictEqual(refused.status, 403, member.email)
        assert.strictEqual(refused.body.error.type, "permission_error")
      }
      // no CSRF token: refused, nothing changes
      const noCsrf = yield* raw("PUT", SETTINGS, { cookie: admin.cookie, json: body })
      assert.strictEqual(noCsrf.status, 403)
      assert.strictEqual(noCsrf.body.error.param, "x-csrf-token")
      assert.isNull((yield* raw("GET", SETTINGS, { cookie: viewer.cookie })).body.client_name)

      const set = yield* raw("PUT", SETTINGS, { cookie: admin.cookie, csrf: admin.csrf, json: body })
      assert.strictEqual(set.status, 200, set.text)
      assert.strictEqual(set.body.client_name, "Green Leaf")
      assert.strictEqual(set.body.logo_url, "https://greenleaf.example/logo.png")
      assert.isNumber(set.body.updated_at)
      const read = yield* raw("GET", SETTINGS, { cookie: viewer.cookie })
      assert.deepStrictEqual(read.body, set.body)

      // the owner may too, and null clears one
      const cleared = yield* raw("PUT", SETTINGS, {
        cookie: owner.cookie,
        csrf: owner.csrf,
        json: { client_name: "Green Leaf Retail", logo_url: null }
      })
      assert.strictEqual(cleared.status, 200)
      assert.strictEqual(cleared.body.client_name, "Green Leaf Retail")
      assert.isNull(cleared.body.logo_url)

      // audited, with who, what was and what is (no secret to hide)
      const entries = (yield* auditOf(owner)).filter((e) => e.action === "connect.settings_updated")
      assert.strictEqual(entries.length, 2)
      assert.strictEqual(entries[1]!.actor, admin.email)
      assert.strictEqual(entries[1]!.target, organisation.id)
      assert.deepStrictEqual(entries[1]!.detail, {
        from: { client_name: null, logo_url: null },
        to: body
      })
      assert.strictEqual(entries[0]!.actor, owner.email)
      assert.deepStrictEqual(entries[0]!.detail.to, { client_name: "Green Leaf Retail", logo_url: null })

      // bad input: 400 in the envelope, naming the field; nothing changes
      const bad: Array<readonly [unknown, string]> = [
        [{ client_name: "", logo_url: null }, "client_name"],
        [{ client_name: "   ", logo_url: null }, "client_name"],
        [{ client_name: "x".repeat(65), logo_url: null }, "client_name"],
        [{ client_name: 42, logo_url: null }, "client_name"],
        [{ client_name: "Acme", logo_url: "http://acme.example/logo.png" }, "logo_url"],
        [{ client_name: "Acme", logo_url: "javascript:alert(1)" }, "logo_url"],
        [{ client_name: "Acme", logo_url: `https://acme.example/${"x".repeat(2000)}` }, "logo_url"],
        [{ client_name: "Acme" }, "logo_url"],
        [{ client_name: "Acme", logo_url: null, colour: "red" }, "colour"]
      ]
      for (const [json, param] of bad) {
        const refused = yield* raw("PUT", SETTINGS, { cookie: admin.cookie, csrf: admin.csrf, json })
        assert.strictEqual(refused.status, 400, JSON.stringify(json))
        assert.strictEqual(refused.body.error.type, "validation_error", refused.text)
        assert.strictEqual(refused.body.error.param, param, refused.text)
        assert.isString(refused.body.error.message)
      }
      const blank = yield* raw("PUT", SETTINGS, {
        cookie: admin.cookie,
        csrf: admin.csrf,
        json: { client_name: " ", logo_url: null }
      })
      assert.include(blank.body.error.message, "client_name must not be blank")
      const http = yield* raw("PUT", SETTINGS, {
        cookie: admin.cookie,
        csrf: admin.csrf,
        json: { client_name: "Acme", logo_url: "http://acme.example/logo.png" }
      })
      assert.include(http.body.error.message, "logo_url must be an https URL")
      assert.strictEqual((yield* raw("GET", SETTINGS, { cookie: viewer.cookie })).body.client_name, "Green Leaf Retail")

      // no session: 401
      assert.strictEqual((yield* raw("GET", SETTINGS)).status, 401)
    }).pipe(Effect.provide(app)))

  it.scoped("link tokens: the call's own values, else the organisation's defaults, else its name and no logo", () =>
    Effect.gen(function*() {
      const { access, admin, owner } = yield* team
      const organisation = (yield* (yield* clientFor(owner)).session.me()).organisation

      // no defaults: the organisation's name
      const before = yield* widget(yield* linkToken(access))
      assert.strictEqual(before.client_name, organisation.name)
      assert.isNull(before.logo_url)

      yield* raw("PUT", SETTINGS, {
        cookie: admin.cookie,
        csrf: admin.csrf,
        json: { client_name: "Green Leaf", logo_url: "https://greenleaf.example/logo.png" }
      })
      // the defaults, when the call names neither
      const defaulted = yield* widget(yield* linkToken(access))
      assert.strictEqual(defaulted.client_name, "Green Leaf")
      assert.strictEqual(defaulted.logo_url, "https://greenleaf.example/logo.png")
      // the call's own values win, each on its own
      const ownName = yield* widget(yield* linkToken(access, { client_name: "Their App" }))
      assert.strictEqual(ownName.client_name, "Their App")
      assert.strictEqual(ownName.logo_url, "https://greenleaf.example/logo.png")
      const ownLogo = yield* widget(yield* linkToken(access, { logo_url: "https://their.example/l.svg" }))
      assert.strictEqual(ownLogo.client_name, "Green Leaf")
      assert.strictEqual(ownLogo.logo_url, "https://their.example/l.svg")
      // a token keeps what it was made with: changing the defaults later does not change it
      const kept = yield* linkToken(access)
      yield* raw("PUT", SETTINGS, {
        cookie: admin.cookie,
        csrf: admin.csrf,
        json: { client_name: null, logo_url: null }
      })
      assert.strictEqual((yield* widget(kept)).client_name, "Green Leaf")
      // cleared: the organisation's name again, no logo
      const after = yield* widget(yield* linkToken(access))
      assert.strictEqual(after.client_name, organisation.name)
      assert.isNull(after.logo_url)

      // another organisation's defaults are its own, and its members cannot see these
      const orgB = yield* Bootstrap.createOrganisation("Organisation B")
      const ownerB = yield* firstOwner(orgB.id, "owner@b.example")
      yield* raw("PUT", SETTINGS, {
        cookie: ownerB.cookie,
        csrf: ownerB.csrf,
        json: { client_name: "B's name", logo_url: null }
      })
      const mine = yield* raw("GET", SETTINGS, { cookie: owner.cookie })
      assert.isNull(mine.body.client_name)
      const theirs = yield* raw("GET", SETTINGS, { cookie: ownerB.cookie })
      assert.strictEqual(theirs.body.client_name, "B's name")
      assert.strictEqual(theirs.body.organisation_name, "Organisation B")
      assert.strictEqual((yield* widget(yield* linkToken(access))).client_name, organisation.name)
    }).pipe(Effect.provide(app)))

  it.scoped("the preview: a sandbox link token with the defaults, developer and up, audited", () =>
    Effect.gen(function*() {
      const { admin, developer, owner, viewer } = yield* team
      yield* raw("PUT", SETTINGS, {
        cookie: admin.cookie,
        csrf: admin.csrf,
        json: { client_name: "Green Leaf", logo_url: "https://greenleaf.example/logo.png" }
      })
      const refused = yield* raw("POST", "/dashboard/api/connect/preview", { cookie: viewer.cookie, csrf: viewer.csrf })
      assert.strictEqual(refused.status, 403)
      const noCsrf = yield* raw("POST", "/dashboard/api/connect/preview", { cookie: developer.cookie })
      assert.strictEqual(noCsrf.status, 403)

      const preview = yield* raw("POST", "/dashboard/api/connect/preview", {
        cookie: developer.cookie,
        csrf: developer.csrf
      })
      assert.strictEqual(preview.status, 200, preview.text)
      const token = preview.body.link_token as string
      assert.match(token, /^link-sandbox-/)
      assert.strictEqual(preview.body.url, `/connect?link_token=${encodeURIComponent(token)}`)
      const shown = yield* widget(token)
      assert.strictEqual(shown.client_name, "Green Leaf")
      assert.strictEqual(shown.logo_url, "https://greenleaf.example/logo.png")
      assert.strictEqual(shown.environment, "sandbox")
      // the Connect page itself lets this origin frame it
      const page = yield* raw("GET", preview.body.url)
      assert.strictEqual(page.status, 200)
      assert.match(String(page.headers["content-security-policy"]), /frame-ancestors 'self'/)

      // on the production plan the preview is still a sandbox link token
      const organisationId = (yield* (yield* clientFor(owner)).session.me()).organisation.id
      assert.isTrue(yield* (yield* Accounts).setPlan(organisationId, "production"))
      const production = yield* raw("POST", "/dashboard/api/connect/preview", {
        cookie: owner.cookie,
        csrf: owner.csrf
      })
      assert.strictEqual(production.status, 200, production.text)
      assert.match(production.body.link_token, /^link-sandbox-/)
      assert.strictEqual((yield* widget(production.body.link_token)).environment, "sandbox")

      const entries = (yield* auditOf(owner)).filter((e) => e.action === "connect.preview_started")
      assert.deepStrictEqual(entries.map((e) => e.actor), [owner.email, developer.email])
      // the link token is never in the audit log
      assert.notInclude(JSON.stringify(entries), token)
    }).pipe(Effect.provide(app)))
})

const tool = (member: Member, method: "GET" | "POST" | "PUT" | "DELETE", path: string, json?: unknown) =>
  raw(method, `/dashboard/api/sandbox${path}`, {
    cookie: member.cookie,
    csrf: member.csrf,
    ...(json === undefined ? {} : { json })
  })

describe("Dashboard sandbox tools", () => {
  it.scoped("options, and a sandbox connection with each test login; a viewer reads only", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const { access, admin, developer, owner, viewer } = yield* team
      const options = yield* tool(viewer, "GET", "")
      assert.strictEqual(options.status, 200)
      assert.sameMembers(options.body.providers.map((p: { name: string }) => p.name), ["provider_a", "provider_b"])
      assert.include(options.body.providers.find((p: { name: string }) => p.name === "provider_a").states, "CO")
      assert.deepStrictEqual(options.body.logins, ["good", "bad", "locked"])
      assert.includeMembers(options.body.scenarios, [
        "transfer_arrived",
        "lab_result_received",
        "connection_login_required",
        "upstream_timeout"
      ])
      assert.deepStrictEqual(options.body.fault_kinds, ["outage", "slow", "rate_limited", "malformed", "expired_login"])

      const refused = yield* tool(viewer, "POST", "/connections", { provider: "provider_a", state: "CO" })
      assert.strictEqual(refused.status, 403)
      for (const member of [developer, admin, owner]) {
        const made = yield* tool(member, "POST", "/connections", {
          provider: "provider_b",
          state: "HI",
          external_id: `store-${member.email}`
        })
        assert.strictEqual(made.status, 201, made.text)
        assert.match(made.body.id, /^conn_/)
        assert.strictEqual(made.body.provider, "provider_b")
        assert.strictEqual(made.body.state, "HI")
        assert.isTrue(made.body.is_sandbox)
        assert.strictEqual(made.body.external_id, `store-${member.email}`)
        // no connection token, nor any other secret, in the answer
        assert.notMatch(made.text, /tb_ct_|token/)
        // it is the organisation's, read through /v1 like any other
        const read = yield* call("GET", `/v1/connections/${made.body.id}`, { token: access })
        assert.strictEqual(read.status, 200)
      }

      // the sandbox's wrong and locked logins are refused as /v1 refuses them
      for (const login of ["bad", "locked"]) {
        const ui = yield* tool(developer, "POST", "/connections", { provider: "provider_a", state: "CO", login })
        const v1 = yield* call("POST", "/v1/sandbox/public_token/create", {
          token: access,
          json: {
            provider: "provider_a",
            state: "CO",
            credentials: { user_key: login === "bad" ? "user_bad" : "user_locked" }
          }
        })
        assert.isAtLeast(ui.status, 400, ui.text)
        assert.strictEqual(ui.status, v1.status, `${ui.text} / ${JSON.stringify(v1.body)}`)
        assert.strictEqual(ui.body.error.code, v1.body.error.code)
        assert.strictEqual(ui.body.error.message, v1.body.error.message)
      }

      // bad input: 400 naming the field
      for (
        const [json, param] of [
          [{ provider: "provider_z", state: "CO" }, "provider"],
          [{ provider: "provider_a", state: "ZZ" }, "state"],
          [{ provider: "provider_a", state: "CO", login: "admin" }, "login"],
          [{ state: "CO" }, "provider"]
        ] as const
      ) {
        const bad = yield* tool(developer, "POST", "/connections", json)
        assert.strictEqual(bad.status, 400, JSON.stringify(json))
        assert.strictEqual(bad.body.error.type, "validation_error")
        assert.strictEqual(bad.body.error.param, param, bad.text)
      }

      const created = (yield* auditOf(owner)).filter((e) => e.action === "sandbox.connection_created")
      assert.strictEqual(created.length, 3)
      assert.deepStrictEqual(created[0]!.detail, { provider: "provider_b", state: "HI", login: "good" })
    }).pipe(Effect.provide(app)))

  it.scoped("simulate, faults and reset run /v1's code: same answers, statuses and events; roles; audit", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const { access, developer, owner, viewer } = yield* team
      const made = yield* tool(developer, "POST", "/connections", { provider: "provider_a", state: "CO" })
      const id = made.body.id as string
      const webhook = yield* call("POST", "/v1/webhooks", {
        token: access,
        json: { url: "http://127.0.0.1:9/hook", events: ["transfer.arrived", "connection.login_required"] }
      })
      assert.strictEqual(webhook.status, 201, JSON.stringify(webhook.body))

      // a viewer reads the fault but changes nothing
      const none = yield* tool(viewer, "GET", `/connections/${id}/fault`)
      assert.strictEqual(none.status, 200)
      assert.deepStrictEqual(none.body, { connection_id: id, fault: null })
      for (
        const [method, path, json] of [
          ["POST", `/connections/${id}/simulate`, { scenario: "transfer_arrived" }],
          ["POST", `/connections/${id}/reset`, undefined],
          ["PUT", `/connections/${id}/fault`, { kind: "outage" }],
          ["DELETE", `/connections/${id}/fault`, undefined]
        ] as const
      ) {
        const refused = yield* tool(viewer, method, path, json)
        assert.strictEqual(refused.status, 403, `${method} ${path}`)
        assert.strictEqual(refused.body.error.type, "permission_error")
      }

      // a scenario: the event and its deliveries, as /v1 answers them
      const simulated = yield* tool(developer, "POST", `/connections/${id}/simulate`, { scenario: "transfer_arrived" })
      assert.strictEqual(simulated.status, 200, simulated.text)
      assert.strictEqual(simulated.body.scenario, "transfer_arrived")
      assert.strictEqual(simulated.body.event.type, "transfer.arrived")
      assert.include(JSON.stringify(simulated.body.event), id)
      assert.strictEqual(simulated.body.deliveries, 1)
      const viaV1 = yield* call("POST", `/v1/sandbox/${id}/simulate`, {
        token: access,
        json: { scenario: "transfer_arrived" }
      })
      assert.strictEqual(viaV1.status, 200)
      assert.deepStrictEqual(Object.keys(viaV1.body.data).sort(), Object.keys(simulated.body).sort())
      assert.strictEqual(viaV1.body.data.deliveries, simulated.body.deliveries)
      const deliveries = yield* call("GET", `/v1/webhooks/${webhook.body.data.id}/deliveries`, { token: access })
      const eventIds = deliveries.body.data.map((d: { event_id: string }) => d.event_id)
      assert.includeMembers(eventIds, [simulated.body.event.id, viaV1.body.data.event.id])

      // a scenario's refusals are /v1's: unknown scenario, bad params
      const unknown = yield* tool(developer, "POST", `/connections/${id}/simulate`, { scenario: "meteor_strike" })
      const unknownV1 = yield* call("POST", `/v1/sandbox/${id}/simulate`, {
        token: access,
        json: { scenario: "meteor_strike" }
      })
      assert.strictEqual(unknown.status, 400)
      assert.strictEqual(unknown.body.error.code, "unknown_scenario")
      assert.strictEqual(unknown.body.error.param, "scenario")
      assert.strictEqual(unknown.body.error.message, unknownV1.body.error.message)
      const badParams = yield* tool(developer, "POST", `/connections/${id}/simulate`, {
        scenario: "lab_result_received",
        params: { result: "maybe" }
      })
      assert.strictEqual(badParams.status, 400)
      assert.match(badParams.body.error.param, /^params/)
      const missing = yield* tool(developer, "POST", `/connections/${id}/simulate`, {})
      assert.strictEqual(missing.status, 400)
      assert.strictEqual(missing.body.error.param, "scenario")

      // connection_login_required moves the connection to error; reset brings it back
      const login = yield* tool(developer, "POST", `/connections/${id}/simulate`, {
        scenario: "connection_login_required"
      })
      assert.strictEqual(login.status, 200, login.text)
      const store = yield* ConnectionStore
      assert.strictEqual(Option.getOrThrow(yield* store.getConnection(id)).status, "error")
      const reset = yield* tool(developer, "POST", `/connections/${id}/reset`)
      assert.strictEqual(reset.status, 200, reset.text)
      assert.strictEqual(reset.body.connection_id, id)
      assert.strictEqual(reset.body.reset_at, new Date(T0).toISOString())
      assert.strictEqual(Option.getOrThrow(yield* store.getConnection(id)).status, "active")

      // a fault: set (read back by every role and through /v1), met by a read, cleared
      const set = yield* tool(developer, "PUT", `/connections/${id}/fault`, { kind: "expired_login" })
      assert.strictEqual(set.status, 200, set.text)
      assert.deepStrictEqual(set.body, { connection_id: id, fault: { kind: "expired_login" } })
      assert.deepStrictEqual((yield* tool(viewer, "GET", `/connections/${id}/fault`)).body, set.body)
      const v1Fault = yield* call("GET", `/v1/sandbox/${id}/faults`, { token: access })
      assert.deepStrictEqual(v1Fault.body.data, set.body)
      const refusedRead = yield* call("GET", `/v1/connections/${id}/facilities`, { token: access })
      assert.strictEqual(refusedRead.status, 409)
      assert.strictEqual(Option.getOrThrow(yield* store.getConnection(id)).status, "error")
      const issues = yield* raw("GET", "/dashboard/api/issues", { cookie: viewer.cookie })
      assert.include(issues.body.data.map((i: { id: string }) => i.id), `connection_needs_relink:${id}`)
      const cleared = yield* tool(developer, "DELETE", `/connections/${id}/fault`)
      assert.strictEqual(cleared.status, 200)
      assert.deepStrictEqual(cleared.body, { connection_id: id, fault: null })
      // the login works again: active, and its issue is gone
      assert.strictEqual(Option.getOrThrow(yield* store.getConnection(id)).status, "active")
      const after = yield* raw("GET", "/dashboard/api/issues", { cookie: viewer.cookie })
      assert.notInclude(after.body.data.map((i: { id: string }) => i.id), `connection_needs_relink:${id}`)

      // a fault of another shape is 400 naming the field
      for (const json of [{ kind: "meteor" }, { kind: "slow", delay_ms: -1 }, { kind: "outage", extra: 1 }]) {
        const bad = yield* tool(developer, "PUT", `/connections/${id}/fault`, json)
        assert.strictEqual(bad.status, 400, JSON.stringify(json))
        assert.strictEqual(bad.body.error.type, "validation_error")
        assert.isString(bad.body.error.param, bad.text)
      }

      // every action is audited, with no secret in it
      const actions = (yield* auditOf(owner)).map((e) => e.action).filter((a) => a.startsWith("sandbox."))
      assert.deepStrictEqual(actions, [
        "sandbox.fault_cleared",
        "sandbox.fault_set",
        "sandbox.reset",
        "sandbox.simulated",
        "sandbox.simulated",
        "sandbox.connection_created"
      ])
      const simulatedEntry = (yield* auditOf(owner)).find((e) => e.action === "sandbox.simulated")!
      assert.strictEqual(simulatedEntry.target, id)
      assert.strictEqual(simulatedEntry.detail.scenario, "connection_login_required")
    }).pipe(Effect.provide(app)))

  it.scoped("a production connection is refused; another organisation's is 404; an unknown one 404", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const { developer, owner } = yield* team
      const organisationId = (yield* (yield* clientFor(owner)).session.me()).organisation.id
      const store = yield* ConnectionStore
      const insert = (id: string, organisation_id: string, is_sandbox: boolean) =>
        store.insertConnection({
          id,
          organisation_id,
          provider: "provider_a",
          state: "CO",
          status: "active",
          is_sandbox,
          external_id: null,
          credentials: null,
          key_id: null,
          token_issued: false,
          created_at: T0,
          updated_at: T0,
          sandbox_version: 0,
          sandbox_fault: null
        })
      yield* insert("conn_production", organisationId, false)
      const orgB = yield* Bootstrap.createOrganisation("Organisation B")
      const ownerB = yield* firstOwner(orgB.id, "owner@b.example")
      const theirs = yield* linkSandbox(
        (yield* call("POST", "/v1/oauth/token", {
          json: {
            grant_type: "client_credentials",
            ...(yield* Effect.map(
              (yield* clientFor(ownerB)).keys.create(),
              (k) => ({ client_id: k.client_id, client_secret: k.client_secret })
            ))
          }
        })).body.access_token
      )

      for (
        const [method, path, json] of [
          ["POST", "simulate", { scenario: "transfer_arrived" }],
          ["POST", "reset", undefined],
          ["PUT", "fault", { kind: "outage" }],
          ["GET", "fault", undefined],
          ["DELETE", "fault", undefined]
        ] as const
      ) {
        const production = yield* tool(developer, method, `/connections/conn_production/${path}`, json)
        assert.strictEqual(production.status, 403, `${method} ${path}: ${production.text}`)
        assert.strictEqual(production.body.error.code, "sandbox_only")
        assert.include(production.body.error.message, "sandbox connections only")
        const other = yield* tool(developer, method, `/connections/${theirs.connection_id}/${path}`, json)
        assert.strictEqual(other.status, 404, `${method} ${path}: ${other.text}`)
        assert.strictEqual(other.body.error.type, "not_found_error")
        const unknown = yield* tool(developer, method, `/connections/conn_nope/${path}`, json)
        assert.strictEqual(unknown.status, 404)
      }
      // the other organisation's connection is untouched
      const theirFault = yield* tool(ownerB, "GET", `/connections/${theirs.connection_id}/fault`)
      assert.strictEqual(theirFault.status, 200)
      assert.isNull(theirFault.body.fault)
    }).pipe(Effect.provide(app)))
})
