/**
 * The dashboard's accounts and API keys (issue #33): invitations and the first owner, sign-in
 * (wrong password, lockout, a new session id at every sign-in, the cookie's flags), CSRF, TOTP,
 * the API Keys page's operations against the real token endpoint, and the secret search. The role
 * matrix is `DashboardRoles.test.ts`. Each test runs the whole server in process on its own
 * SQLite database, on the test clock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap, Http } from "@tracebridge/http"
import { ConfigProvider, Duration, Effect, Layer, Option, TestClock } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as OTPAuth from "otpauth"
import * as Metrics from "../src/Metrics.js"
import { Accounts } from "../src/persistence/Accounts.js"
import { DashboardStore } from "../src/persistence/DashboardStore.js"
import * as Database from "../src/persistence/Database.js"
import * as Server from "../src/Server.js"
import * as Crypto from "../src/services/Crypto.js"
import * as Dashboard from "../src/services/Dashboard.js"
import * as KeyRotation from "../src/services/KeyRotation.js"
import { accept, clientFor, invited, raw, signIn, tokenFor, tokenOf, transcript } from "./support/Dashboard.js"
import * as TestDatabase from "./support/TestDatabase.js"

/** The server over a database given from outside, under a keyring. */
const served = (crypto: Crypto.Service) =>
  Http.makeHttpLive({ worker: false }).pipe(
    Layer.provideMerge(Server.layerTest),
    Layer.provide(Layer.succeed(Crypto.Crypto, crypto))
  )

const app = (database: Layer.Layer<Database.Persistence> = TestDatabase.layer) =>
  Http.makeHttpLive({ worker: false }).pipe(
    Layer.provideMerge(Server.layerTest),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(database)
  )

/** The sandbox organisation of the first start, and its client. */
const firstStart = Effect.map(Bootstrap.firstStart, Option.getOrThrow)

const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url))

describe("Dashboard routes", () => {
  it.scoped(
    "/dashboard answers the pages under a strict CSP; the internal API is outside /v1's document",
    () =>
      Effect.gen(function*() {
        for (const url of ["/dashboard", "/dashboard/accept?token=tbi_x"]) {
          const page = yield* raw("GET", url)
          // 503 when packages/dashboard is not built (the page says how to build it)
          assert.include([200, 503], page.status, url)
          assert.include(page.headers["content-type"], "text/html")
          const csp = page.headers["content-security-policy"]!
          assert.include(csp, "default-src 'none'")
          assert.include(csp, "script-src 'self'")
          assert.notInclude(csp, "unsafe-inline")
          // the built app's scripts by file only (or, unbuilt, the 503 page's none)
          assert.notMatch(page.text, /<script(?![^>]*\bsrc=)[^>]*>/)
          assert.notInclude(page.text, "tbi_x")
        }
        const document = yield* raw("GET", "/v1/openapi.json")
        assert.strictEqual(document.status, 200)
        assert.isFalse(Object.keys(document.body.paths).some((p) => p.startsWith("/dashboard")))
        assert.notInclude(document.text, "Dashboard")
        // a known path with another method is 405 with Allow; an unknown path the envelope's 404
        const put = yield* raw("PUT", "/dashboard/api/session", { json: {} })
        assert.strictEqual(put.status, 405)
        assert.strictEqual(put.headers["allow"], "GET, POST, DELETE")
        assert.strictEqual(put.body.error.code, "method_not_allowed")
        assert.strictEqual(
          Metrics.routeOf("/dashboard/api/keys/tb_client_x/roll"),
          "/dashboard/api/keys/:client_id/roll"
        )
        const unknown = yield* raw("GET", "/dashboard/api/nothing")
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual(unknown.body.error.type, "not_found_error")
      }).pipe(Effect.provide(app())),
    120_000
  )
})

describe("Dashboard invitations", () => {
  it.scoped("an invitation signs its owner in once; a reused or expired one is refused", () =>
    Effect.gen(function*() {
      const start = yield* firstStart
      // the first start's banner carries a one-time owner link
      const link = yield* Bootstrap.firstOwnerLink(start.client_id)
      assert.isDefined(link)
      const banner = Bootstrap.banner(start, link)
      assert.include(banner, link!)
      assert.match(link!, /^http:\/\/127\.0\.0\.1:4000\/dashboard\/accept\?token=tbi_/)

      const owner = yield* accept(link!, "Owner@Example.com")
      const me = yield* (yield* clientFor(owner)).session.me()
      assert.strictEqual(me.role, "owner")
      assert.strictEqual(me.user.email, "owner@example.com")
      assert.strictEqual(me.csrf_token, owner.csrf)

      const again = yield* raw("POST", "/dashboard/api/invitations/accept", {
        json: { token: tokenOf(link!), email: "second@example.com", password: "a-long-password-1" }
      })
      assert.strictEqual(again.status, 400)
      assert.strictEqual(again.body.error.type, "validation_error")
      assert.strictEqual(again.body.error.param, "token")
      assert.include(again.body.error.message, "already used")
      assert.isUndefined(again.cookie)

      const later = yield* Bootstrap.invite(me.organisation.id, "late@example.com", "viewer")
      yield* TestClock.adjust(Duration.days(8))
      const expired = yield* raw("POST", "/dashboard/api/invitations/accept", {
        json: { token: tokenOf(later.link), email: "late@example.com", password: "a-long-password-1" }
      })
      assert.strictEqual(expired.status, 400)
      assert.include(expired.body.error.message, "expired")

      const unknown = yield* raw("POST", "/dashboard/api/invitations/accept", {
        json: { token: "tbi_nope", email: "x@example.com", password: "a-long-password-1" }
      })
      assert.strictEqual(unknown.status, 400)
      assert.strictEqual(unknown.body.error.code, "invalid_parameter")
    }).pipe(Effect.provide(app())), 120_000)

  it.scoped(
    "an invitation is for its e-mail only, and an unknown organisation is refused",
    () =>
      Effect.gen(function*() {
        const start = yield* firstStart
        assert.isDefined(start.client_id)
        const orgs = yield* Effect.flatMap(Accounts, (a) => a.listOrganisations())
        const invitation = yield* Bootstrap.invite(orgs[0]!.id, "named@example.com", "developer")
        const other = yield* raw("POST", "/dashboard/api/invitations/accept", {
          json: { token: tokenOf(invitation.link), email: "someone@example.com", password: "a-long-password-1" }
        })
        assert.strictEqual(other.status, 400)
        assert.strictEqual(other.body.error.param, "email")
        const short = yield* raw("POST", "/dashboard/api/invitations/accept", {
          json: { token: tokenOf(invitation.link), email: "named@example.com", password: "short" }
        })
        assert.strictEqual(short.status, 400)
        assert.strictEqual(short.body.error.param, "password")
        const developer = yield* accept(invitation.link, "named@example.com")
        const me = yield* (yield* clientFor(developer)).session.me()
        assert.strictEqual(me.role, "developer")
        const missing = yield* Effect.either(Bootstrap.invite("org_missing", "a@example.com", "owner"))
        assert.deepStrictEqual(missing._tag === "Left" ? missing.left : "", "no organisation org_missing")
      }).pipe(Effect.provide(app())),
    120_000
  )

  it.scoped(
    "an existing account joins another organisation with its own password, under the lockout",
    () =>
      Effect.gen(function*() {
        const start = yield* firstStart
        const member = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "two-orgs@example.com")
        const orgB = yield* Bootstrap.createOrganisation("Second organisation")
        const invitation = yield* Bootstrap.invite(orgB.id, null, "admin")
        const join = (password: string) =>
          raw("POST", "/dashboard/api/invitations/accept", {
            json: { token: tokenOf(invitation.link), email: member.email, password }
          })
        for (let i = 0; i < Dashboard.ACCOUNT_FAILURES; i++) {
          assert.strictEqual((yield* join("a wrong password, long")).status, 401)
        }
        const locked = yield* join(member.password)
        assert.strictEqual(locked.status, 429)
        // the same lock holds at sign-in
        assert.strictEqual(
          (yield* raw("POST", "/dashboard/api/session", { json: { email: member.email, password: member.password } }))
            .status,
          429
        )
        yield* TestClock.adjust(Duration.millis(Dashboard.LOCK_WINDOW_MS))
        const joined = yield* join(member.password)
        assert.strictEqual(joined.status, 200)
        assert.strictEqual(joined.body.organisation.id, orgB.id)
        assert.strictEqual(joined.body.role, "admin")
        assert.strictEqual(joined.body.user.id, member.userId)
        // sign-in opens the oldest membership, or the one named
        assert.strictEqual((yield* signIn(member.email, member.password)).organisationId, member.organisationId)
        const named = yield* raw("POST", "/dashboard/api/session", {
          json: { email: member.email, password: member.password, organisation_id: orgB.id }
        })
        assert.strictEqual(named.body.organisation.id, orgB.id)
        const notMine = yield* raw("POST", "/dashboard/api/session", {
          json: { email: member.email, password: member.password, organisation_id: "org_elsewhere" }
        })
        assert.strictEqual(notMine.status, 401)
        // a second invitation to an organisation it is in already
        const again = yield* Bootstrap.invite(orgB.id, member.email, "viewer")
        const twice = yield* raw("POST", "/dashboard/api/invitations/accept", {
          json: { token: tokenOf(again.link), email: member.email, password: member.password }
        })
        assert.strictEqual(twice.status, 409)
        assert.strictEqual(twice.body.error.type, "conflict_error")
      }).pipe(Effect.provide(app())),
    120_000
  )

  it("the CLI's invite prints a one-time link under the public origin", () => {
    const env = {
      ...process.env,
      TRACEBRIDGE_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), "tb-cli-invite-")),
      DATABASE_URL: "",
      TRACEBRIDGE_PUBLIC_URL: "https://api.example.com"
    }
    const run = (...args: Array<string>) => spawnSync(process.execPath, [cli, ...args], { env, encoding: "utf8" })
    const org = run("create-org", "Acme Retail")
    assert.strictEqual(org.status, 0, org.stderr)
    const id = org.stdout.trim().split("\t")[0]!
    const invite = run("invite", id, "Boss@Acme.example", "--role", "owner")
    assert.strictEqual(invite.status, 0, invite.stderr)
    assert.match(invite.stdout, /invitation for boss@acme\.example as owner/)
    assert.match(invite.stdout, /https:\/\/api\.example\.com\/dashboard\/accept\?token=tbi_[A-Za-z0-9_-]{43}/)
    assert.strictEqual(run("invite", id, "not-an-email").status, 2)
    assert.strictEqual(run("invite", id, "a@b.example", "--role", "emperor").status, 2)
    assert.strictEqual(run("invite", "org_missing", "a@b.example").status, 2)
  }, 120_000)
})

describe("Dashboard sign-in", () => {
  it.scoped(
    "a wrong password is refused; repeated failures lock the account, even for the right password",
    () =>
      Effect.gen(function*() {
        const start = yield* firstStart
        const owner = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "lock@example.com")
        const wrong = yield* raw("POST", "/dashboard/api/session", {
          json: { email: "lock@example.com", password: "wrong-password" }
        })
        assert.strictEqual(wrong.status, 401)
        assert.strictEqual(wrong.body.error.type, "authentication_error")
        assert.isUndefined(wrong.cookie)
        const unknown = yield* raw("POST", "/dashboard/api/session", {
          json: { email: "nobody@example.com", password: "wrong-password" }
        })
        assert.strictEqual(unknown.status, 401)
        assert.strictEqual(unknown.body.error.message, wrong.body.error.message)
        for (let i = 1; i < Dashboard.ACCOUNT_FAILURES; i++) {
          assert.strictEqual(
            (yield* raw("POST", "/dashboard/api/session", { json: { email: "lock@example.com", password: "nope" } }))
              .status,
            401
          )
        }
        const locked = yield* raw("POST", "/dashboard/api/session", {
          json: { email: "lock@example.com", password: owner.password }
        })
        assert.strictEqual(locked.status, 429)
        assert.strictEqual(locked.body.error.type, "rate_limit_error")
        assert.strictEqual(locked.headers["retry-after"], String(Dashboard.LOCK_WINDOW_MS / 1000))
        assert.isUndefined(locked.cookie)
        yield* TestClock.adjust(Duration.millis(Dashboard.LOCK_WINDOW_MS - 60_000))
        assert.strictEqual(
          (yield* raw("POST", "/dashboard/api/session", {
            json: { email: "lock@example.com", password: owner.password }
          }))
            .status,
          429
        )
        yield* TestClock.adjust(Duration.minutes(1))
        const after = yield* signIn("lock@example.com", owner.password)
        assert.notStrictEqual(after.cookie, owner.cookie)
      }).pipe(Effect.provide(app())),
    120_000
  )

  it.scoped("one address's many failures lock that address", () =>
    Effect.gen(function*() {
      const start = yield* firstStart
      const owner = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "addr@example.com")
      for (let i = 0; i < Dashboard.ADDRESS_FAILURES; i++) {
        yield* raw("POST", "/dashboard/api/session", { json: { email: `guess${i}@example.com`, password: "x" } })
      }
      const locked = yield* raw("POST", "/dashboard/api/session", {
        json: { email: owner.email, password: owner.password }
      })
      assert.strictEqual(locked.status, 429)
      assert.include(locked.body.error.message, "address")
    }).pipe(Effect.provide(app())), 120_000)

  it.scoped(
    "a sign-in makes a new session id and ends the one the browser sent; the cookie's flags",
    () =>
      Effect.gen(function*() {
        const start = yield* firstStart
        const owner = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "rotate@example.com")
        assert.match(owner.cookie, /^tbs_[A-Za-z0-9_-]{43}$/)
        const again = yield* raw("POST", "/dashboard/api/session", {
          cookie: owner.cookie,
          json: { email: owner.email, password: owner.password }
        })
        assert.strictEqual(again.status, 200)
        assert.isDefined(again.cookie)
        assert.notStrictEqual(again.cookie, owner.cookie)
        // the id the browser held before (one an attacker may have planted) no longer works
        assert.strictEqual((yield* raw("GET", "/dashboard/api/session", { cookie: owner.cookie })).status, 401)
        assert.strictEqual((yield* raw("GET", "/dashboard/api/session", { cookie: again.cookie })).status, 200)

        const flags = again.setCookie.split(";").map((p) => p.trim().toLowerCase())
        assert.include(flags, "httponly")
        assert.include(flags, "samesite=lax")
        assert.include(flags, "path=/dashboard")
        assert.notInclude(flags, "secure")

        const https = yield* raw("POST", "/dashboard/api/session", {
          headers: { "x-forwarded-proto": "https" },
          json: { email: owner.email, password: owner.password }
        })
        assert.strictEqual(https.status, 200)
        assert.include(https.setCookie.split(";").map((p) => p.trim().toLowerCase()), "secure")

        // sign-out ends the session and clears the cookie
        const me = yield* raw("GET", "/dashboard/api/session", { cookie: https.cookie })
        const out = yield* raw("DELETE", "/dashboard/api/session", { cookie: https.cookie, csrf: me.body.csrf_token })
        assert.strictEqual(out.status, 204)
        assert.strictEqual(out.cookie, "")
        assert.strictEqual((yield* raw("GET", "/dashboard/api/session", { cookie: https.cookie })).status, 401)
      }).pipe(Effect.provide(app())),
    120_000
  )

  it.scoped(
    "under an https TRACEBRIDGE_PUBLIC_URL the cookie is Secure and links name that origin",
    () =>
      Effect.gen(function*() {
        const start = yield* firstStart
        const link = (yield* Bootstrap.firstOwnerLink(start.client_id))!
        assert.match(link, /^https:\/\/dash\.example\.com\/dashboard\/accept\?token=tbi_/)
        const answer = yield* raw("POST", "/dashboard/api/invitations/accept", {
          json: { token: tokenOf(link), email: "secure@example.com", password: "a-long-password-1" }
        })
        assert.strictEqual(answer.status, 200)
        const flags = answer.setCookie.split(";").map((p) => p.trim().toLowerCase())
        assert.includeMembers(flags, ["secure", "httponly", "samesite=lax", "path=/dashboard"])
        const invite = yield* raw("POST", "/dashboard/api/invitations", {
          cookie: answer.cookie,
          csrf: answer.body.csrf_token,
          json: { email: "next@example.com", role: "viewer" }
        })
        assert.match(invite.body.link, /^https:\/\/dash\.example\.com\/dashboard\/accept\?token=tbi_/)
      }).pipe(
        Effect.provide(app()),
        Effect.withConfigProvider(
          ConfigProvider.fromMap(new Map([["TRACEBRIDGE_PUBLIC_URL", "https://dash.example.com"]]))
        )
      ),
    120_000
  )

  it.scoped(
    "a session ends after 30 idle minutes, and 12 hours after sign-in at the latest",
    () =>
      Effect.gen(function*() {
        const start = yield* firstStart
        const owner = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "idle@example.com")
        yield* TestClock.adjust(Duration.minutes(29))
        assert.strictEqual((yield* raw("GET", "/dashboard/api/session", { cookie: owner.cookie })).status, 200)
        yield* TestClock.adjust(Duration.minutes(30))
        const idle = yield* raw("GET", "/dashboard/api/session", { cookie: owner.cookie })
        assert.strictEqual(idle.status, 401)
        assert.strictEqual(idle.body.error.code, "token_expired")

        const fresh = yield* signIn(owner.email, owner.password)
        // 24 × 29 min = 11 h 36 min: never idle, still within 12 hours
        for (let i = 0; i < 24; i++) {
          yield* TestClock.adjust(Duration.minutes(29))
          assert.strictEqual((yield* raw("GET", "/dashboard/api/session", { cookie: fresh.cookie })).status, 200)
        }
        yield* TestClock.adjust(Duration.minutes(29))
        const old = yield* raw("GET", "/dashboard/api/session", { cookie: fresh.cookie })
        assert.strictEqual(old.status, 401)
        assert.strictEqual(old.body.error.code, "token_expired")

        // an ended session is deleted by the next sign-in, whether it is presented again or not
        const quiet = yield* signIn(owner.email, owner.password)
        const store = yield* DashboardStore
        assert.isTrue(Option.isSome(yield* store.getSession(Crypto.hash(quiet.cookie))))
        yield* TestClock.adjust(Duration.minutes(31))
        yield* signIn(owner.email, owner.password)
        assert.isTrue(Option.isNone(yield* store.getSession(Crypto.hash(quiet.cookie))))
      }).pipe(Effect.provide(app())),
    120_000
  )
})

describe("Dashboard CSRF", () => {
  it.scoped("a change without the CSRF token, or with a wrong one, is refused 403", () =>
    Effect.gen(function*() {
      const start = yield* firstStart
      const owner = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "csrf@example.com")
      const missing = yield* raw("POST", "/dashboard/api/keys", { cookie: owner.cookie })
      assert.strictEqual(missing.status, 403)
      assert.deepInclude(missing.body.error, { type: "permission_error", code: "forbidden", param: "x-csrf-token" })
      assert.isString(missing.body.error.request_id)
      const wrong = yield* raw("POST", "/dashboard/api/keys", { cookie: owner.cookie, csrf: `${owner.csrf}x` })
      assert.strictEqual(wrong.status, 403)
      // another session's token is wrong for this one
      const other = yield* signIn(owner.email, owner.password)
      const crossed = yield* raw("POST", "/dashboard/api/keys", { cookie: other.cookie, csrf: owner.csrf })
      assert.strictEqual(crossed.status, 403)
      for (
        const [method, url] of [
          ["DELETE", "/dashboard/api/session"],
          ["POST", "/dashboard/api/invitations"],
          ["PATCH", `/dashboard/api/members/${owner.userId}`],
          ["DELETE", `/dashboard/api/members/${owner.userId}`],
          ["POST", "/dashboard/api/totp/enrol"],
          ["POST", `/dashboard/api/keys/${start.client_id}/revoke`],
          ["POST", `/dashboard/api/keys/${start.client_id}/roll`]
        ] as const
      ) {
        const refused = yield* raw(method, url, { cookie: other.cookie, json: {} })
        assert.strictEqual(refused.status, 403, `${method} ${url}`)
      }
      // nothing was changed by the refused calls
      const keys = yield* (yield* clientFor(other)).keys.list()
      assert.deepStrictEqual(keys.data.map((k) => [k.client_id, k.revoked_at]), [[start.client_id, null]])
      const created = yield* raw("POST", "/dashboard/api/keys", { cookie: other.cookie, csrf: other.csrf })
      assert.strictEqual(created.status, 201)
    }).pipe(Effect.provide(app())), 120_000)
})

describe("Dashboard TOTP", () => {
  it.scoped("enrol, confirm, then sign-in needs a code; disable needs one too", () =>
    Effect.gen(function*() {
      const start = yield* firstStart
      const owner = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "totp@example.com")
      const api = yield* clientFor(owner)
      const enrolment = yield* api.totp.enrol()
      assert.match(enrolment.otpauth_uri, /^otpauth:\/\/totp\/Tracebridge:totp%40example\.com\?/)
      const totp = OTPAuth.URI.parse(enrolment.otpauth_uri) as OTPAuth.TOTP
      assert.strictEqual(totp.secret.base32, enrolment.secret)
      const codeAt = (ms: number) => totp.generate({ timestamp: ms })

      // not yet on: a password alone still signs in
      yield* signIn(owner.email, owner.password)
      const wrongConfirm = yield* raw("POST", "/dashboard/api/totp/confirm", {
        cookie: owner.cookie,
        csrf: owner.csrf,
        json: { code: codeAt(0) === "000000" ? "111111" : "000000" }
      })
      assert.strictEqual(wrongConfirm.status, 400)
      const confirmed = yield* api.totp.confirm({ payload: { code: codeAt(0) } })
      assert.isTrue(confirmed.totp_enabled)

      yield* TestClock.adjust(Duration.minutes(5))
      const now = 5 * 60_000
      const without = yield* raw("POST", "/dashboard/api/session", {
        json: { email: owner.email, password: owner.password }
      })
      assert.strictEqual(without.status, 401)
      assert.strictEqual(without.body.error.param, "totp_code")
      assert.isUndefined(without.cookie)
      const stale = yield* raw("POST", "/dashboard/api/session", {
        json: { email: owner.email, password: owner.password, totp_code: codeAt(0) }
      })
      assert.strictEqual(stale.status, 401)
      const withCode = yield* signIn(owner.email, owner.password, codeAt(now))
      const me = yield* (yield* clientFor(withCode)).session.me()
      assert.isTrue(me.user.totp_enabled)
      // a code works once: the same code again (a replay within its window) is refused
      const replayed = yield* raw("POST", "/dashboard/api/session", {
        json: { email: owner.email, password: owner.password, totp_code: codeAt(now) }
      })
      assert.strictEqual(replayed.status, 401)
      assert.strictEqual(replayed.body.error.param, "totp_code")
      yield* TestClock.adjust(Duration.seconds(30))
      const later = now + 30_000

      const api2 = yield* clientFor(withCode)
      assert.strictEqual(
        (yield* raw("POST", "/dashboard/api/totp/disable", {
          cookie: withCode.cookie,
          csrf: withCode.csrf,
          json: { code: "12345" }
        })).status,
        400
      )
      const disabled = yield* api2.totp.disable({ payload: { code: codeAt(later) } })
      assert.isFalse(disabled.totp_enabled)
      yield* signIn(owner.email, owner.password)
    }).pipe(Effect.provide(app())), 120_000)
})

describe("Dashboard TOTP secrets and key rotation", () => {
  it.scoped(
    "reencrypt moves a sealed TOTP secret to the current key, and sign-in with a code still works",
    () =>
      Effect.gen(function*() {
        const keyA = randomBytes(32)
        const keyB = randomBytes(32)
        const start = yield* firstStart
        const link = (yield* Bootstrap.firstOwnerLink(start.client_id))!
        const { enrolment, owner } = yield* Effect.gen(function*() {
          const owner = yield* accept(link, "rotate-totp@example.com")
          const api = yield* clientFor(owner)
          const enrolment = yield* api.totp.enrol()
          const totp = OTPAuth.URI.parse(enrolment.otpauth_uri) as OTPAuth.TOTP
          yield* api.totp.confirm({ payload: { code: totp.generate({ timestamp: 0 }) } })
          return { enrolment, owner }
        }).pipe(Effect.provide(served(Crypto.make([keyA]))))
        const store = yield* DashboardStore
        const before = Option.getOrThrow(yield* store.getUserByEmail("rotate-totp@example.com"))
        assert.strictEqual(before.totp_key_id, Crypto.keyIdOf(keyA))
        const report = yield* KeyRotation.reencrypt.pipe(
          Effect.provideService(Crypto.Crypto, Crypto.make([keyB, keyA]))
        )
        assert.deepStrictEqual(report.failed, [])
        assert.isAtLeast(report.reencrypted, 1)
        const after = Option.getOrThrow(yield* store.getUserByEmail("rotate-totp@example.com"))
        assert.strictEqual(after.totp_key_id, Crypto.keyIdOf(keyB))
        assert.strictEqual(Crypto.make([keyB]).decrypt(after.totp_secret!, after.totp_key_id!), enrolment.secret)
        // the server under the new key alone still checks the code
        const totp = OTPAuth.URI.parse(enrolment.otpauth_uri) as OTPAuth.TOTP
        yield* TestClock.adjust(Duration.seconds(30))
        yield* Effect.provide(
          signIn(owner.email, owner.password, totp.generate({ timestamp: 30_000 })),
          served(Crypto.make([keyB]))
        )
      }).pipe(Effect.provide(TestDatabase.layer)),
    120_000
  )
})

describe("Dashboard API keys", () => {
  it.scoped(
    "create shows the secret once; it works at the token endpoint; a roll overlaps; a revoke ends tokens at once",
    () =>
      Effect.gen(function*() {
        const start = yield* firstStart
        const developer = yield* Effect.flatMap(
          accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "keys-owner@example.com"),
          (owner) => invited(owner, "dev@example.com", "developer")
        )
        const api = yield* clientFor(developer)
        const created = yield* api.keys.create()
        assert.match(created.client_secret, /^tb_secret_/)
        const listed = yield* raw("GET", "/dashboard/api/keys", { cookie: developer.cookie })
        assert.notInclude(listed.text, created.client_secret)
        const mine = listed.body.data.find((k: any) => k.client_id === created.client_id)
        assert.deepStrictEqual(mine, {
          client_id: created.client_id,
          created_at: 0,
          created_by: "dev@example.com",
          last_used_at: null,
          revoked_at: null,
          previous_secret_expires_at: null
        })
        const first = listed.body.data.find((k: any) => k.client_id === start.client_id)
        assert.strictEqual(first.created_by, null)

        yield* TestClock.adjust(Duration.seconds(10))
        const token = yield* tokenFor(created.client_id, created.client_secret)
        assert.strictEqual(token.status, 200)
        const used = (yield* api.keys.list()).data.find((k) => k.client_id === created.client_id)!
        assert.strictEqual(used.last_used_at, 10_000)

        // a roll: both secrets work until the expiry picked, then only the new one
        const tooLong = yield* raw("POST", `/dashboard/api/keys/${created.client_id}/roll`, {
          cookie: developer.cookie,
          csrf: developer.csrf,
          json: { expires_in_seconds: 7 * 86_400 + 1 }
        })
        assert.strictEqual(tooLong.status, 400)
        assert.strictEqual(tooLong.body.error.param, "expires_in_seconds")
        const rolled = yield* api.keys.roll({
          path: { client_id: created.client_id },
          payload: { expires_in_seconds: 60 }
        })
        assert.notStrictEqual(rolled.client_secret, created.client_secret)
        assert.strictEqual(rolled.previous_secret_expires_at, 70_000)
        assert.strictEqual((yield* tokenFor(created.client_id, created.client_secret)).status, 200)
        assert.strictEqual((yield* tokenFor(created.client_id, rolled.client_secret)).status, 200)
        const overlapping = (yield* api.keys.list()).data.find((k) => k.client_id === created.client_id)!
        assert.strictEqual(overlapping.previous_secret_expires_at, 70_000)
        yield* TestClock.adjust(Duration.seconds(61))
        const old = yield* tokenFor(created.client_id, created.client_secret)
        assert.strictEqual(old.status, 401)
        assert.strictEqual(old.body.error, "invalid_client")
        const fresh = yield* tokenFor(created.client_id, rolled.client_secret)
        assert.strictEqual(fresh.status, 200)
        assert.isNull(
          (yield* api.keys.list()).data.find((k) => k.client_id === created.client_id)!
            .previous_secret_expires_at
        )

        // a revoke: its access token answers 401 at its next request, and no new one is issued
        const access = fresh.body.access_token as string
        assert.strictEqual((yield* raw("GET", "/v1/webhooks/", { token: access })).status, 200)
        const revoked = yield* api.keys.revoke({ path: { client_id: created.client_id } })
        assert.strictEqual(revoked.revoked_at, 71_000)
        const after = yield* raw("GET", "/v1/webhooks/", { token: access })
        assert.strictEqual(after.status, 401)
        assert.strictEqual(after.body.error.type, "authentication_error")
        assert.strictEqual((yield* tokenFor(created.client_id, rolled.client_secret)).status, 401)
        const refresh = yield* raw("POST", "/v1/oauth/token", {
          json: { grant_type: "refresh_token", refresh_token: fresh.body.refresh_token }
        })
        assert.strictEqual(refresh.status, 400)
        const rollRevoked = yield* raw("POST", `/dashboard/api/keys/${created.client_id}/roll`, {
          cookie: developer.cookie,
          csrf: developer.csrf,
          json: { expires_in_seconds: 0 }
        })
        assert.strictEqual(rollRevoked.status, 409)

        // every change is in the audit log, newest first, with who and when
        const audit = yield* api.team.audit({ urlParams: {} })
        assert.deepStrictEqual(
          audit.data.slice(0, 3).map((e) => [e.action, e.actor, e.target, e.at]),
          [
            ["api_key.revoked", "dev@example.com", created.client_id, 71_000],
            ["api_key.rolled", "dev@example.com", created.client_id, 10_000],
            ["api_key.created", "dev@example.com", created.client_id, 0]
          ]
        )
        const paged = yield* api.team.audit({ urlParams: { page: 2, per_page: 2 } })
        assert.strictEqual(paged.data[0]!.id, audit.data[2]!.id)
      }).pipe(Effect.provide(app())),
    120_000
  )
})

describe("Dashboard secrets", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-dashboard-secrets-"))
  const file = path.join(dir, Database.sqliteFileName)
  it.scoped(
    "no secret, password, hash, session id or TOTP secret in any answer but its reveal, nor in the database",
    () =>
      Effect.gen(function*() {
        const start = yield* firstStart
        const link = (yield* Bootstrap.firstOwnerLink(start.client_id))!
        const owner = yield* accept(link, "secrets@example.com", "correct horse battery staple")
        // every call through `raw`, so that every answer is in the transcript
        const post = (who: { cookie: string; csrf: string }, url: string, json?: unknown) =>
          Effect.map(
            raw("POST", url, { cookie: who.cookie, csrf: who.csrf, ...(json === undefined ? {} : { json }) }),
            (answer) => {
              assert.isBelow(answer.status, 300, `${url}: ${answer.text}`)
              return answer.body
            }
          )
        const enrolment = yield* post(owner, "/dashboard/api/totp/enrol")
        const totp = OTPAuth.URI.parse(enrolment.otpauth_uri) as OTPAuth.TOTP
        yield* post(owner, "/dashboard/api/totp/confirm", { code: totp.generate({ timestamp: 0 }) })
        yield* TestClock.adjust(Duration.seconds(30))
        const again = yield* signIn(owner.email, owner.password, totp.generate({ timestamp: 30_000 }))
        const created = yield* post(again, "/dashboard/api/keys")
        const rolled = yield* post(again, `/dashboard/api/keys/${created.client_id}/roll`, { expires_in_seconds: 5 })
        const invitation = yield* post(again, "/dashboard/api/invitations", {
          email: "next@example.com",
          role: "viewer"
        })
        const viewer = yield* accept(invitation.link, "next@example.com", "another long password")
        for (
          const url of [
            "/dashboard/api/keys",
            "/dashboard/api/members",
            "/dashboard/api/audit",
            "/dashboard/api/session"
          ]
        ) {
          assert.strictEqual((yield* raw("GET", url, { cookie: viewer.cookie })).status, 200)
        }
        yield* post(again, `/dashboard/api/keys/${created.client_id}/revoke`)

        const secrets: Array<[string, string, number]> = [
          // [what, value, how many answers may hold it]
          ["owner password", owner.password, 0],
          ["viewer password", viewer.password, 0],
          ["session id", owner.cookie, 1],
          ["second session id", again.cookie, 1],
          ["session id hash", Crypto.hash(owner.cookie), 0],
          ["TOTP secret", enrolment.secret, 1],
          ["client secret", created.client_secret, 1],
          ["client secret hash", Crypto.hash(created.client_secret), 0],
          ["rolled secret", rolled.client_secret, 1],
          ["invitation token", tokenOf(invitation.link), 1],
          ["owner invitation token", tokenOf(link), 0],
          ["invitation token hash", Crypto.hash(tokenOf(invitation.link)), 0]
        ]
        for (const [what, value, allowed] of secrets) {
          const holding = transcript.filter((t) => t.text.includes(value))
          assert.strictEqual(holding.length, allowed, `${what} in ${holding.map((t) => t.label).join(", ")}`)
        }
        // and the database files (with the write-ahead log) hold none of them in plain text
        yield* Effect.sleep(Duration.zero)
        const stored = ["", "-wal"].map((suffix) =>
          fs.existsSync(`${file}${suffix}`) ? fs.readFileSync(`${file}${suffix}`).toString("latin1") : ""
        ).join("\n")
        assert.include(stored, "secrets@example.com")
        for (
          const [what, value] of [
            ["owner password", owner.password],
            ["viewer password", viewer.password],
            ["session id", owner.cookie],
            ["TOTP secret", enrolment.secret],
            ["client secret", created.client_secret],
            ["rolled secret", rolled.client_secret],
            ["invitation token", tokenOf(invitation.link)],
            ["CSRF token", owner.csrf]
          ] as const
        ) {
          assert.notInclude(stored, value, `${what} in the database`)
        }
      }).pipe(Effect.provide(app(Layer.orDie(Database.layerSqlite(file))))),
    120_000
  )
})
