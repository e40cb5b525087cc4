/**
 * The dashboard's single sign-on on Postgres (issue #33, ADR 0029), in a fresh schema of its own,
 * against a real OpenID provider (`oidc-provider` on a loopback port): a domain claimed (and a
 * second claim refused), an invitation and a domain joined by one SSO sign-in, the session in the
 * invitation's organisation, the next sign-in by subject, a replayed answer refused. Runs with
 * `npm run test:pg` (TEST_DATABASE_URL).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Bootstrap } from "@tracebridge/http"
import { Effect, Option } from "effect"
import { DashboardStore } from "../src/persistence/DashboardStore.js"
import { accept, clientFor, firstStartOwner, raw } from "./support/Dashboard.js"
import { onFreshApp } from "./support/DashboardPg.js"
import * as OidcProvider from "./support/OidcProvider.js"
import { testDatabaseUrl } from "./support/PgSchema.js"

const url = testDatabaseUrl("DashboardSso.pg.test.ts")
const REDIRECT = "http://127.0.0.1:9/dashboard/sso/callback"
let provider: OidcProvider.TestProvider

beforeAll(async () => {
  provider = await OidcProvider.start([REDIRECT])
})
afterAll(async () => {
  await provider.close()
})

describe("Dashboard single sign-on (Postgres)", () => {
  it.scoped(
    "domains, an invitation and a domain joined by SSO, the subject matched next time, a replay refused",
    () =>
      Effect.gen(function*() {
        const owner = yield* firstStartOwner("pg-owner@example.com")
        const api = yield* clientFor(owner)
        yield* api.team.addSsoDomain({ payload: { domain: "pg.example", role: "viewer" } })
        const other = yield* Bootstrap.createOrganisation("Other")
        yield* Bootstrap.invite(other.id, "lee@pg.example", "admin")
        const otherOwner = yield* Effect.flatMap(
          Bootstrap.invite(other.id, "boss@other.example", "owner"),
          ({ link }) => accept(link, "boss@other.example")
        )
        const taken = yield* raw("POST", "/dashboard/api/sso/domains", {
          cookie: otherOwner.cookie,
          csrf: otherOwner.csrf,
          json: { domain: "PG.example" }
        })
        assert.strictEqual(taken.status, 409)
        assert.deepStrictEqual((yield* api.team.ssoDomains()).data.map((d) => [d.domain, d.role]), [[
          "pg.example",
          "viewer"
        ]])

        const signIn = Effect.gen(function*() {
          const started = yield* raw("GET", "/dashboard/api/sso/start")
          assert.strictEqual(started.status, 302, started.text)
          const state = /tb_sso_state=([^;]+)/.exec(started.setCookie)![1]!
          const back = yield* Effect.promise(() =>
            OidcProvider.authorize(started.headers["location"]!, "lee@pg.example", REDIRECT)
          )
          const query = new URL(back).search
          const answer = yield* raw("POST", "/dashboard/api/sso/callback", {
            json: { query },
            headers: { cookie: `tb_sso_state=${state}` }
          })
          return { answer, query, state }
        })
        const first = yield* signIn
        assert.strictEqual(first.answer.status, 200, first.answer.text)
        assert.strictEqual(first.answer.body.organisation.id, other.id)
        assert.strictEqual(first.answer.body.role, "admin")
        assert.deepStrictEqual(
          first.answer.body.organisations.map((o: any) => [o.id, o.role]).sort(),
          [[other.id, "admin"], [owner.organisationId, "viewer"]].sort()
        )
        const me = yield* raw("GET", "/dashboard/api/session", { cookie: first.answer.cookie })
        assert.strictEqual(me.body.user.email, "lee@pg.example")
        assert.strictEqual(me.body.organisation.id, other.id)
        const replay = yield* raw("POST", "/dashboard/api/sso/callback", {
          json: { query: first.query },
          headers: { cookie: `tb_sso_state=${first.state}` }
        })
        assert.strictEqual(replay.status, 400)
        assert.strictEqual(replay.body.error.param, "state")

        const second = yield* signIn
        assert.strictEqual(second.answer.status, 200, second.answer.text)
        assert.strictEqual(second.answer.body.user.id, first.answer.body.user.id)
        const store = yield* DashboardStore
        assert.strictEqual(
          Option.getOrThrow(yield* store.getIdentity(provider.issuer, "lee@pg.example")).user_id,
          first.answer.body.user.id
        )
      }).pipe(onFreshApp(url, "dashboard_sso", {
        TRACEBRIDGE_OIDC_ISSUER: provider.issuer,
        TRACEBRIDGE_OIDC_CLIENT_ID: OidcProvider.CLIENT_ID,
        TRACEBRIDGE_OIDC_CLIENT_SECRET: OidcProvider.CLIENT_SECRET,
        TRACEBRIDGE_OIDC_REDIRECT_URL: REDIRECT
      })),
    120_000
  )
})
