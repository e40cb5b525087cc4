/**
 * The dashboard's single sign-on (issue #33, ADR 0029) against a real OpenID provider
 * (`oidc-provider` on a loopback port, `support/OidcProvider.ts`): the whole sign-in (the callback
 * sets the session; `GET /session` answers the user in the right organisation), a refused state,
 * a refused nonce, an unverified e-mail, an unknown domain, an invitation accepted by SSO, a domain
 * mapping's role, the organisation switch, TOTP skipped, the domain API's role checks, SSO off, and
 * the client secret in no answer and no log line.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Bootstrap, Http } from "@tracebridge/http"
import { ConfigProvider, Effect, Either, Layer, Logger, LogLevel, Option } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as OTPAuth from "otpauth"
import { DashboardStore } from "../src/persistence/DashboardStore.js"
import * as Database from "../src/persistence/Database.js"
import * as Server from "../src/Server.js"
import * as Crypto from "../src/services/Crypto.js"
import * as DashboardService from "../src/services/Dashboard.js"
import { accept, clientFor, invited, raw, transcript } from "./support/Dashboard.js"
import * as OidcProvider from "./support/OidcProvider.js"
import * as TestDatabase from "./support/TestDatabase.js"

const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url))
const REDIRECT = "http://127.0.0.1:9/dashboard/sso/callback"
let provider: OidcProvider.TestProvider

beforeAll(async () => {
  provider = await OidcProvider.start([REDIRECT])
})
afterAll(async () => {
  await provider.close()
})

/** Every log line of the server, for the secret search. */
const logged: Array<string> = []
const recorder = Logger.zip(Logger.structuredLogger, Logger.logfmtLogger).pipe(
  Logger.map(([structured, logfmt]) => void logged.push(JSON.stringify(structured), logfmt))
)
const logging = Layer.mergeAll(Logger.add(recorder), Logger.minimumLogLevel(LogLevel.All))

const app = (sso: boolean) =>
  Http.makeHttpLive({ worker: false }).pipe(
    Layer.provideMerge(Server.layerTest),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.layer),
    Layer.provide(Layer.setConfigProvider(
      ConfigProvider.fromMap(
        new Map(
          sso
            ? [
              ["TRACEBRIDGE_OIDC_ISSUER", provider.issuer],
              ["TRACEBRIDGE_OIDC_CLIENT_ID", OidcProvider.CLIENT_ID],
              ["TRACEBRIDGE_OIDC_CLIENT_SECRET", OidcProvider.CLIENT_SECRET],
              ["TRACEBRIDGE_OIDC_REDIRECT_URL", REDIRECT]
            ]
            : []
        )
      ).pipe(ConfigProvider.orElse(() => ConfigProvider.fromEnv()))
    ))
  )

const withSso = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provide(app(true)), Effect.provide(logging))

/** The value of a cookie in an answer's Set-Cookie. */
const cookieIn = (setCookie: string, name: string) => new RegExp(`${name}=([^;,]*)`).exec(setCookie)?.[1]

/** Starts a sign-in: the provider's address and the state cookie. */
const start = Effect.gen(function*() {
  const answer = yield* raw("GET", "/dashboard/api/sso/start")
  assert.strictEqual(answer.status, 302, answer.text)
  const location = answer.headers["location"]!
  const state = cookieIn(answer.setCookie, "tb_sso_state")
  assert.isDefined(state)
  return { location, state: state!, setCookie: answer.setCookie }
})

/** The provider's login for `login`, up to the redirect back: the callback's query. */
const atProvider = (location: string, login: string) =>
  Effect.promise(() => OidcProvider.authorize(location, login, REDIRECT)).pipe(
    Effect.map((back) => new URL(back).search)
  )

const callback = (query: string, stateCookie: string | undefined, session?: string) =>
  raw("POST", "/dashboard/api/sso/callback", {
    json: { query },
    headers: {
      cookie: [
        ...(stateCookie === undefined ? [] : [`tb_sso_state=${stateCookie}`]),
        ...(session === undefined ? [] : [`tb_session=${session}`])
      ].join("; ")
    }
  })

/** A whole sign-in as `login`: the callback's answer. */
const sso = (login: string) =>
  Effect.gen(function*() {
    const { location, state } = yield* start
    return yield* callback(yield* atProvider(location, login), state)
  })

/** The first start's owner (by password), with a typed client. */
const owner = Effect.gen(function*() {
  const first = Option.getOrThrow(yield* Bootstrap.firstStart)
  const member = yield* accept((yield* Bootstrap.firstOwnerLink(first.client_id))!, "owner@example.com")
  return { member, dashboard: yield* clientFor(member) }
})

// one after another: the last test reads what the others answered and logged
describe.sequential("Dashboard single sign-on (OIDC)", () => {
  it.scoped(
    "a domain mapping lets a verified e-mail in with its role, through PKCE, state and nonce",
    () =>
      withSso(Effect.gen(function*() {
        const { dashboard, member } = yield* owner
        const status = yield* raw("GET", "/dashboard/api/sso")
        assert.deepStrictEqual(status.body, { enabled: true })
        const mapped = yield* dashboard.team.addSsoDomain({ payload: { domain: "Acme.Test", role: "viewer" } })
        assert.deepStrictEqual([mapped.domain, mapped.role], ["acme.test", "viewer"])

        const { location, setCookie, state } = yield* start
        const authorization = new URL(location)
        assert.strictEqual(authorization.origin, provider.issuer)
        assert.strictEqual(authorization.searchParams.get("client_id"), OidcProvider.CLIENT_ID)
        assert.strictEqual(authorization.searchParams.get("code_challenge_method"), "S256")
        assert.strictEqual(authorization.searchParams.get("redirect_uri"), REDIRECT)
        assert.strictEqual(authorization.searchParams.get("state"), state)
        assert.isNotEmpty(authorization.searchParams.get("nonce"))
        assert.notInclude(location, OidcProvider.CLIENT_SECRET)
        assert.match(setCookie, /tb_sso_state=[^;]+;.*HttpOnly/i)
        assert.match(setCookie, /Path=\/dashboard\/api\/sso/)
        assert.match(setCookie, /SameSite=Lax/i)

        const query = yield* atProvider(location, "dev@acme.test")
        const signedIn = yield* callback(query, state)
        assert.strictEqual(signedIn.status, 200, signedIn.text)
        assert.strictEqual(signedIn.body.user.email, "dev@acme.test")
        assert.strictEqual(signedIn.body.organisation.id, member.organisationId)
        assert.strictEqual(signedIn.body.role, "viewer")
        // the same cookie as a password sign-in's
        assert.isDefined(signedIn.cookie)
        assert.match(signedIn.setCookie, /tb_session=tbs_[^;]+;.*HttpOnly/i)
        assert.match(signedIn.setCookie, /Path=\/dashboard[;,]/)
        // the state cookie is cleared
        assert.match(signedIn.setCookie, /tb_sso_state=;/)

        const me = yield* raw("GET", "/dashboard/api/session", { cookie: signedIn.cookie })
        assert.strictEqual(me.status, 200)
        assert.strictEqual(me.body.user.email, "dev@acme.test")
        assert.strictEqual(me.body.organisation.id, member.organisationId)
        assert.strictEqual(me.body.role, "viewer")
        assert.strictEqual(me.body.csrf_token, signedIn.body.csrf_token)
        // a change needs the CSRF token, as after a password sign-in
        const noCsrf = yield* raw("DELETE", "/dashboard/api/session", { cookie: signedIn.cookie })
        assert.strictEqual(noCsrf.status, 403)

        // the same answer twice: the state worked once
        const replay = yield* callback(query, state)
        assert.strictEqual(replay.status, 400)
        assert.strictEqual(replay.body.error.param, "state")

        // the next sign-in finds the user by the issuer's subject, and a new session id each time
        const again = yield* sso("dev@acme.test")
        assert.strictEqual(again.status, 200, again.text)
        assert.strictEqual(again.body.user.id, signedIn.body.user.id)
        assert.notStrictEqual(again.cookie, signedIn.cookie)
        const store = yield* DashboardStore
        const identity = yield* store.getIdentity(provider.issuer, "dev@acme.test")
        assert.strictEqual(Option.getOrThrow(identity).user_id, signedIn.body.user.id)
        const members = yield* dashboard.team.members()
        assert.deepStrictEqual(
          members.data.filter((m) => m.email === "dev@acme.test").map((m) => m.role),
          ["viewer"]
        )
        const audit = yield* dashboard.team.audit({ urlParams: {} })
        const actions = audit.data.map((e) => `${e.action} ${e.target}`)
        assert.include(actions, "member.joined_by_domain dev@acme.test")
        assert.include(actions, "sso_domain.added acme.test")
        assert.deepInclude(
          audit.data.find((e) => e.action === "session.signed_in" && e.target === "dev@acme.test")?.detail,
          { method: "oidc" }
        )
      })),
    120_000
  )

  it.scoped(
    "a state not started in this browser, unknown or missing is refused; so is a wrong nonce",
    () =>
      withSso(Effect.gen(function*() {
        const { dashboard } = yield* owner
        yield* dashboard.team.addSsoDomain({ payload: { domain: "acme.test" } })
        const a = yield* start
        const b = yield* start
        const queryA = yield* atProvider(a.location, "dev@acme.test")
        // another browser's state cookie
        const crossed = yield* callback(queryA, b.state)
        assert.strictEqual(crossed.status, 400)
        assert.strictEqual(crossed.body.error.type, "validation_error")
        assert.strictEqual(crossed.body.error.param, "state")
        assert.isUndefined(crossed.cookie)
        // no cookie at all
        const bare = yield* callback(queryA, undefined)
        assert.strictEqual(bare.status, 400)
        assert.strictEqual(bare.body.error.param, "state")
        // a made-up state, in the cookie and the query alike
        const forged = new URLSearchParams(queryA.slice(1))
        forged.set("state", "made-up-state")
        const unknown = yield* callback(`?${forged}`, "made-up-state")
        assert.strictEqual(unknown.status, 400)
        assert.include(unknown.body.error.message, "unknown, already used or expired")
        // no state in the answer
        const none = yield* callback("?code=abc", a.state)
        assert.strictEqual(none.status, 400)

        // the nonce kept for the sign-in no longer matches the ID token's: refused by openid-client
        const c = yield* start
        const queryC = yield* atProvider(c.location, "dev@acme.test")
        const store = yield* DashboardStore
        const kept = Option.getOrThrow(yield* store.takeSsoState(Crypto.hash(c.state), 0))
        yield* store.insertSsoState({ ...kept, nonce: "another-nonce" })
        const tampered = yield* callback(queryC, c.state)
        assert.strictEqual(tampered.status, 401, tampered.text)
        assert.strictEqual(tampered.body.error.type, "authentication_error")
        assert.include(tampered.body.error.message, "could not be verified")
        assert.isUndefined(tampered.cookie)
        assert.isTrue(logged.some((line) => line.includes("single sign-on refused") && line.includes("claim nonce")))
        // and the first sign-in, with its own state cookie, still works
        const ok = yield* callback(queryA, a.state)
        assert.strictEqual(ok.status, 200, ok.text)
      })),
    120_000
  )

  it.scoped(
    "an unknown domain and an unverified e-mail are refused, and make no account",
    () =>
      withSso(Effect.gen(function*() {
        const { dashboard } = yield* owner
        yield* dashboard.team.addSsoDomain({ payload: { domain: "acme.test" } })
        const unknown = yield* sso("someone@elsewhere.test")
        assert.strictEqual(unknown.status, 403)
        assert.strictEqual(unknown.body.error.type, "permission_error")
        assert.include(unknown.body.error.message, "No organisation for this e-mail domain (elsewhere.test)")
        assert.isUndefined(unknown.cookie)
        const store = yield* DashboardStore
        assert.isTrue(Option.isNone(yield* store.getUserByEmail("someone@elsewhere.test")))
        const unverified = yield* sso("unverified@acme.test")
        assert.strictEqual(unverified.status, 401)
        assert.include(unverified.body.error.message, "has not verified this e-mail")
        assert.isTrue(Option.isNone(yield* store.getUserByEmail("unverified@acme.test")))
      })),
    120_000
  )

  it.scoped(
    "an invitation for the e-mail is accepted by SSO; the switch moves the session between organisations",
    () =>
      withSso(Effect.gen(function*() {
        const { dashboard, member } = yield* owner
        // an invitation in the first organisation, a domain mapping in a second
        const invitation = yield* dashboard.team.invite({ payload: { email: "lee@partner.test", role: "admin" } })
        const other = yield* Bootstrap.createOrganisation("Partner Co")
        const partnerOwner = yield* Effect.flatMap(
          Bootstrap.invite(other.id, "boss@partner.test", "owner"),
          ({ link }) => accept(link, "boss@partner.test")
        )
        const partner = yield* clientFor(partnerOwner)
        yield* partner.team.addSsoDomain({ payload: { domain: "partner.test", role: "developer" } })

        const signedIn = yield* sso("lee@partner.test")
        assert.strictEqual(signedIn.status, 200, signedIn.text)
        // the invitation's organisation opens, with its role; the domain's is joined too
        assert.strictEqual(signedIn.body.organisation.id, member.organisationId)
        assert.strictEqual(signedIn.body.role, "admin")
        assert.deepStrictEqual(
          signedIn.body.organisations.map((o: { id: string; role: string }) => [o.id, o.role]).sort(),
          [[member.organisationId, "admin"], [other.id, "developer"]].sort()
        )
        const used = yield* raw("POST", "/dashboard/api/invitations/accept", {
          json: {
            token: new URL(invitation.link).searchParams.get("token"),
            email: "lee@partner.test",
            password: "a-long-password-1"
          }
        })
        assert.strictEqual(used.status, 400, "the invitation was used by the SSO sign-in")

        // the organisation switch (the same for a password sign-in's session)
        const lee = { cookie: signedIn.cookie!, csrf: signedIn.body.csrf_token as string }
        const switched = yield* raw("POST", "/dashboard/api/session/organisation", {
          cookie: lee.cookie,
          csrf: lee.csrf,
          json: { organisation_id: other.id }
        })
        assert.strictEqual(switched.status, 200, switched.text)
        assert.strictEqual(switched.body.organisation.id, other.id)
        assert.strictEqual(switched.body.role, "developer")
        const me = yield* raw("GET", "/dashboard/api/session", { cookie: lee.cookie })
        assert.strictEqual(me.body.organisation.id, other.id)
        const members = yield* raw("GET", "/dashboard/api/members", { cookie: lee.cookie })
        assert.include(members.text, "boss@partner.test")
        assert.notInclude(members.text, "owner@example.com")
        const notMine = yield* Bootstrap.createOrganisation("Not mine")
        const refused = yield* raw("POST", "/dashboard/api/session/organisation", {
          cookie: lee.cookie,
          csrf: lee.csrf,
          json: { organisation_id: notMine.id }
        })
        assert.strictEqual(refused.status, 404)
        const noCsrf = yield* raw("POST", "/dashboard/api/session/organisation", {
          cookie: lee.cookie,
          json: { organisation_id: member.organisationId }
        })
        assert.strictEqual(noCsrf.status, 403)
      })),
    120_000
  )

  it.scoped(
    "an existing account signs in by SSO without its TOTP code (the provider owns the second factor)",
    () =>
      withSso(Effect.gen(function*() {
        const { dashboard, member } = yield* owner
        const enrolment = yield* dashboard.totp.enrol()
        const totp = OTPAuth.URI.parse(enrolment.otpauth_uri) as OTPAuth.TOTP
        yield* dashboard.totp.confirm({ payload: { code: totp.generate({ timestamp: 0 }) } })
        // no domain mapping and no invitation: the account's own membership opens
        const signedIn = yield* sso("owner@example.com")
        assert.strictEqual(signedIn.status, 200, signedIn.text)
        assert.strictEqual(signedIn.body.user.id, member.userId)
        assert.strictEqual(signedIn.body.user.totp_enabled, true)
        assert.strictEqual(signedIn.body.role, "owner")
        // its password sign-in still asks for the code
        const password = yield* raw("POST", "/dashboard/api/session", {
          json: { email: member.email, password: member.password }
        })
        assert.strictEqual(password.status, 401)
        assert.strictEqual(password.body.error.param, "totp_code")
      })),
    120_000
  )

  it.scoped(
    "domains: owners and admins manage them; developers and viewers cannot; another organisation's are invisible",
    () =>
      withSso(Effect.gen(function*() {
        const { dashboard, member } = yield* owner
        const admin = yield* invited(member, "admin@example.com", "admin")
        const developer = yield* invited(member, "dev@example.com", "developer")
        const viewer = yield* invited(member, "viewer@example.com", "viewer")
        const asAdmin = yield* clientFor(admin)
        const added = yield* raw("POST", "/dashboard/api/sso/domains", {
          cookie: admin.cookie,
          csrf: admin.csrf,
          json: { domain: "example.com" }
        })
        assert.strictEqual(added.status, 201, added.text)
        assert.strictEqual(added.body.role, "developer")
        for (const who of [developer, viewer]) {
          const add = yield* raw("POST", "/dashboard/api/sso/domains", {
            cookie: who.cookie,
            csrf: who.csrf,
            json: { domain: "other.example" }
          })
          assert.strictEqual(add.status, 403, who.email)
          const remove = yield* raw("DELETE", "/dashboard/api/sso/domains/example.com", {
            cookie: who.cookie,
            csrf: who.csrf
          })
          assert.strictEqual(remove.status, 403, who.email)
        }
        // an owner role is not a domain's to give; a malformed domain is refused
        const owners = yield* raw("POST", "/dashboard/api/sso/domains", {
          cookie: admin.cookie,
          csrf: admin.csrf,
          json: { domain: "x.example", role: "owner" }
        })
        assert.strictEqual(owners.status, 400)
        const bad = yield* raw("POST", "/dashboard/api/sso/domains", {
          cookie: admin.cookie,
          csrf: admin.csrf,
          json: { domain: "not a domain" }
        })
        assert.strictEqual(bad.status, 400)
        assert.strictEqual(bad.body.error.param, "domain")
        const twice = yield* raw("POST", "/dashboard/api/sso/domains", {
          cookie: admin.cookie,
          csrf: admin.csrf,
          json: { domain: "EXAMPLE.com" }
        })
        assert.strictEqual(twice.status, 409)

        // another organisation: its own list, and ours invisible
        const other = yield* Bootstrap.createOrganisation("Other")
        const otherOwner = yield* Effect.flatMap(
          Bootstrap.invite(other.id, "boss@other.example", "owner"),
          ({ link }) => accept(link, "boss@other.example")
        )
        const theirs = yield* clientFor(otherOwner)
        assert.deepStrictEqual((yield* theirs.team.ssoDomains()).data, [])
        const taken = yield* raw("POST", "/dashboard/api/sso/domains", {
          cookie: otherOwner.cookie,
          csrf: otherOwner.csrf,
          json: { domain: "example.com" }
        })
        assert.strictEqual(taken.status, 409)
        assert.include(taken.body.error.message, "another organisation")
        const notTheirs = yield* raw("DELETE", "/dashboard/api/sso/domains/example.com", {
          cookie: otherOwner.cookie,
          csrf: otherOwner.csrf
        })
        assert.strictEqual(notTheirs.status, 404)
        yield* theirs.team.addSsoDomain({ payload: { domain: "other.example" } })
        // every role of ours reads ours only
        for (const who of [developer, viewer]) {
          const list = yield* raw("GET", "/dashboard/api/sso/domains", { cookie: who.cookie })
          assert.deepStrictEqual(list.body.data.map((d: { domain: string }) => d.domain), ["example.com"])
        }
        const removed = yield* raw("DELETE", "/dashboard/api/sso/domains/example.com", {
          cookie: admin.cookie,
          csrf: admin.csrf
        })
        assert.strictEqual(removed.status, 204)
        assert.deepStrictEqual((yield* asAdmin.team.ssoDomains()).data, [])
        const audit = yield* dashboard.team.audit({ urlParams: {} })
        assert.includeMembers(audit.data.map((e) => e.action), ["sso_domain.added", "sso_domain.removed"])
        assert.strictEqual(audit.data.find((e) => e.action === "sso_domain.removed")?.actor, "admin@example.com")
      })),
    120_000
  )

  it.scoped(
    "off when not configured: no SSO on the sign-in page, and its routes say so in the envelope",
    () =>
      Effect.gen(function*() {
        const status = yield* raw("GET", "/dashboard/api/sso")
        assert.deepStrictEqual(status.body, { enabled: false })
        const started = yield* raw("GET", "/dashboard/api/sso/start")
        assert.strictEqual(started.status, 403)
        assert.strictEqual(started.body.error.type, "permission_error")
        assert.strictEqual(started.body.error.code, "capability_not_enabled")
        assert.include(started.body.error.message, "not configured")
        const back = yield* callback("?code=x&state=y", "y")
        assert.strictEqual(back.status, 403)
        assert.strictEqual(back.body.error.code, "capability_not_enabled")
      }).pipe(Effect.provide(app(false)), Effect.provide(logging)),
    120_000
  )

  it.scoped(
    "two first sign-ins at once for one new e-mail both open a session, on one account",
    () =>
      withSso(Effect.gen(function*() {
        const { dashboard } = yield* owner
        yield* dashboard.team.addSsoDomain({ payload: { domain: "twins.test", role: "developer" } })
        // two browsers through the provider first, then both callbacks at the same time
        const first = yield* start
        const second = yield* start
        const queries = [
          yield* atProvider(first.location, "twin@twins.test"),
          yield* atProvider(second.location, "twin@twins.test")
        ]
        const answers = yield* Effect.all(
          [callback(queries[0]!, first.state), callback(queries[1]!, second.state)],
          { concurrency: 2 }
        )
        for (const answer of answers) assert.strictEqual(answer.status, 200, answer.text)
        assert.strictEqual(answers[0]!.body.user.id, answers[1]!.body.user.id, "one account")
        assert.strictEqual(answers[0]!.body.role, "developer")
        // five at once, straight at the service: every one reads "no such account" before any writes it
        const service = yield* Effect.provide(DashboardService.Dashboard, DashboardService.layer)
        const many = yield* Effect.all(
          Array.from({ length: 5 }, (_, i) =>
            Effect.either(service.signInFederated(
              { issuer: provider.issuer, subject: `sub-quint-${i}`, email: "quint@twins.test" },
              undefined
            ))),
          { concurrency: "unbounded" }
        )
        for (const result of many) assert.isTrue(Either.isRight(result), JSON.stringify(result))
        const ids = new Set(many.map((r) => Either.getOrThrow(r).me.user.id))
        assert.strictEqual(ids.size, 1, "one account for the five")
        const members = yield* dashboard.team.members()
        assert.strictEqual(members.data.filter((m) => m.email === "twin@twins.test").length, 1, "one membership")
        assert.strictEqual(members.data.filter((m) => m.email === "quint@twins.test").length, 1, "one membership")
      })),
    120_000
  )

  it.scoped("the CLI adds, lists and removes an organisation's domains, audited", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tb-cli-sso-"))
      const env = { ...process.env, TRACEBRIDGE_DATA_DIR: dir, DATABASE_URL: "" }
      const run = (...args: Array<string>) => spawnSync(process.execPath, [cli, ...args], { env, encoding: "utf8" })
      const org = run("create-org", "Acme Retail")
      assert.strictEqual(org.status, 0, org.stderr)
      const id = org.stdout.trim().split("\t")[0]!
      const other = run("create-org", "Other").stdout.trim().split("\t")[0]!
      const added = run("sso-domain", "add", id, "Acme.EXAMPLE", "--role", "viewer")
      assert.strictEqual(added.status, 0, added.stderr)
      assert.strictEqual(added.stdout, "acme.example\tviewer\n")
      assert.strictEqual(run("sso-domain", "add", id, "shop.acme.example").stdout, "shop.acme.example\tdeveloper\n")
      assert.strictEqual(run("sso-domain", "list", id).stdout, "acme.example\tviewer\nshop.acme.example\tdeveloper\n")
      const taken = run("sso-domain", "add", other, "acme.example")
      assert.strictEqual(taken.status, 2)
      assert.include(taken.stderr, "claimed by another organisation")
      assert.include(run("sso-domain", "add", id, "acme.example").stderr, "already a single sign-on domain")
      assert.strictEqual(run("sso-domain", "add", id, "x.example", "--role", "owner").status, 2)
      assert.include(run("sso-domain", "add", id, "not a domain").stderr, "is not an e-mail domain")
      assert.strictEqual(run("sso-domain", "remove", other, "acme.example").status, 2)
      const removed = run("sso-domain", "remove", id, "shop.acme.example")
      assert.strictEqual(removed.status, 0, removed.stderr)
      assert.strictEqual(run("sso-domain", "list", id).stdout, "acme.example\tviewer\n")
      // audited, with no actor (the operator)
      const entries = yield* Effect.flatMap(DashboardStore, (store) => store.listAudit(id, 0, 10)).pipe(
        Effect.provide(Layer.orDie(Database.layerSqlite(path.join(dir, Database.sqliteFileName))))
      )
      assert.deepStrictEqual(
        entries.map((e) => [e.action, e.target, e.actor_id]).reverse(),
        [
          ["sso_domain.added", "acme.example", null],
          ["sso_domain.added", "shop.acme.example", null],
          ["sso_domain.removed", "shop.acme.example", null]
        ]
      )
    }), 240_000)

  it("the client secret is in no answer and no log line", () => {
    assert.isAbove(transcript.length, 20)
    assert.isAbove(logged.length, 0)
    for (const { label, text } of transcript) assert.notInclude(text, OidcProvider.CLIENT_SECRET, label)
    for (const line of logged) assert.notInclude(line, OidcProvider.CLIENT_SECRET)
  })
})
