/**
 * Issue #28, items 8 and 9: a malformed `redirect_uri` gave 500s (and an orphan connection on
 * submit); production accepted `http://`; the Connect page allowed `frame-ancestors *`; a state
 * system's own text reached the client in a 403.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { ProviderError } from "@tracebridge/core"
import { Http, Server } from "@tracebridge/http"
import { ConfigProvider, Effect, HashMap, Layer, Logger, Ref } from "effect"
import * as http from "node:http"
import * as Errors from "../../src/Errors.js"
import { LinkTokens } from "../../src/persistence/LinkTokens.js"
import * as RequestId from "../../src/RequestId.js"
import * as Crypto from "../../src/services/Crypto.js"
import { Accounts, call, productionSignIn, signIn, submitLogin, TestApp } from "../support/TestApp.js"
import * as TestDatabase from "../support/TestDatabase.js"

const create = (access: string, json: Record<string, unknown>) =>
  call("POST", "/v1/link/token/create", { token: access, json })

/** The Connect page's headers (it is HTML, not JSON). */
const pageHeaders = (path: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(HttpClientRequest.get(path))
    return { status: response.status, headers: response.headers }
  }).pipe(Effect.scoped, Effect.orDie)

const cspOf = (headers: Readonly<Record<string, string>>) => headers["content-security-policy"] ?? ""
const frameAncestors = (csp: string) => /frame-ancestors ([^;]*)/.exec(csp)?.[1]?.trim() ?? ""

describe("redirect_uri is parsed at link token creation (issue #28)", () => {
  it.effect("a malformed, credentialed or fragment redirect_uri is a 400 naming redirect_uri", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      for (
        const bad of [
          "http://[::1/",
          "https://user:pw@app.example/back",
          "https://app.example/back#frag",
          "http://app.example/back",
          "javascript:alert(1)"
        ]
      ) {
        const answer = yield* create(me.access, { redirect_uri: bad })
        assert.strictEqual(answer.status, 400, `${bad}: ${JSON.stringify(answer.body)}`)
        assert.strictEqual(answer.body.error.code, "invalid_parameter", bad)
        assert.strictEqual(answer.body.error.param, "redirect_uri", bad)
      }
      for (const good of ["https://app.example/back?x=1", "http://localhost:3000/done", "http://127.0.0.1:8080/"]) {
        const answer = yield* create(me.access, { redirect_uri: good })
        assert.strictEqual(answer.status, 200, `${good}: ${JSON.stringify(answer.body)}`)
      }
    }).pipe(Effect.provide(TestApp)))

  it.effect("production refuses http:// (even loopback) and accepts https://", () =>
    Effect.gen(function*() {
      const prod = yield* productionSignIn
      for (const bad of ["http://app.example/back", "http://localhost:3000/back"]) {
        const answer = yield* create(prod.access, { redirect_uri: bad })
        assert.strictEqual(answer.status, 400, `${bad}: ${JSON.stringify(answer.body)}`)
        assert.strictEqual(answer.body.error.param, "redirect_uri")
      }
      const ok = yield* create(prod.access, { redirect_uri: "https://app.example/back" })
      assert.strictEqual(ok.status, 200, JSON.stringify(ok.body))
    }).pipe(Effect.provide(TestApp)))

  it.effect("an organisation's allow-list refuses another origin", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const accounts = yield* Accounts
      const orgs = yield* accounts.listOrganisations()
      const org = orgs.find((o) => o.name !== "Production org")!
      assert.isTrue(yield* accounts.setRedirectOrigins(org.id, ["https://app.example"]))
      const refused = yield* create(me.access, { redirect_uri: "https://evil.example/back" })
      assert.strictEqual(refused.status, 400, JSON.stringify(refused.body))
      assert.strictEqual(refused.body.error.param, "redirect_uri")
      const ok = yield* create(me.access, { redirect_uri: "https://app.example/back" })
      assert.strictEqual(ok.status, 200, JSON.stringify(ok.body))
      // the page may be framed by the allowed origin, not by a parent_origin from the query
      const page = yield* pageHeaders(
        `/connect?link_token=${encodeURIComponent(ok.body.data.link_token)}&parent_origin=https%3A%2F%2Fevil.example`
      )
      const ancestors = frameAncestors(cspOf(page.headers))
      assert.include(ancestors, "https://app.example")
      assert.notInclude(ancestors, "evil.example")
      assert.notInclude(ancestors, "*.")
      assert.notMatch(ancestors, /(^|\s)\*(\s|$)/)
    }).pipe(Effect.provide(TestApp)))
})

describe("a bad stored redirect_uri never gives a 500 nor a connection (issue #28)", () => {
  it.effect("/connect/session and /connect/submit answer 400 link_token_invalid and link nothing", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const accounts = yield* Accounts
      const org = (yield* accounts.listOrganisations())[0]!
      const linkTokens = yield* LinkTokens
      const token = Crypto.token("link-sandbox-")
      yield* linkTokens.insertLinkToken({
        hash: Crypto.hash(token),
        organisation_id: org.id,
        environment: "sandbox",
        metadata: "{}",
        redirect_uri: "http://[::1/",
        state: null,
        external_id: null,
        connection_id: null,
        client_name: null,
        logo_url: null,
        expires_at: Date.now() + 3_600_000,
        created_at: Date.now()
      })
      const before = yield* call("GET", "/v1/connections", { token: me.access })
      const session = yield* call("GET", `/connect/session?link_token=${encodeURIComponent(token)}`)
      assert.strictEqual(session.status, 400, JSON.stringify(session.body))
      assert.strictEqual(session.body.error.code, "link_token_invalid")
      const submit = yield* call("POST", "/connect/submit", {
        json: { link_token: token, provider: "provider_a", state: "CO", credentials: { api_key: "x", user_key: "y" } }
      })
      assert.strictEqual(submit.status, 400, JSON.stringify(submit.body))
      assert.strictEqual(submit.body.error.code, "link_token_invalid")
      const after = yield* call("GET", "/v1/connections", { token: me.access })
      assert.strictEqual(after.body.data.length, before.body.data.length)
      const page = yield* pageHeaders(
        `/connect?link_token=${encodeURIComponent(token)}&parent_origin=https%3A%2F%2Fevil.example`
      )
      assert.strictEqual(page.status, 200)
      assert.notInclude(frameAncestors(cspOf(page.headers)), "evil.example")
      assert.notMatch(frameAncestors(cspOf(page.headers)), /(^|\s)\*(\s|$)/)
    }).pipe(Effect.provide(TestApp)))
})

describe("upstream text never reaches the client (issue #28)", () => {
  it.effect("a provider's 403 text goes to the log with the request id, not into the message", () =>
    Effect.gen(function*() {
      const logged = yield* Ref.make<Array<string>>([])
      const logger = Logger.make<unknown, void>(({ annotations, message }) => {
        const annotated = HashMap.toEntries(annotations).map(([k, v]) => `${k}=${String(v)}`).join(" ")
        Effect.runSync(Ref.update(logged, (l) => [...l, `${JSON.stringify(message)} ${annotated}`]))
      })
      const error = new ProviderError.ProviderPermissionDenied({
        provider: "provider_a",
        operation: "packages",
        message: "The login may not packages: UPSTREAM-SECRET-403-TEXT license 402-R-0001"
      })
      const wire = yield* Errors.fromProviderError(error).pipe(
        Effect.locally(RequestId.current, "req_test_28"),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      const body = JSON.stringify(wire)
      assert.notInclude(body, "UPSTREAM-SECRET-403-TEXT")
      assert.include(body, "forbidden")
      const lines = (yield* Ref.get(logged)).join("\n")
      assert.include(lines, "UPSTREAM-SECRET-403-TEXT")
      assert.include(lines, "req_test_28")
    }))
})

describe("upstream text never reaches the client, end to end (issue #28)", () => {
  const SECRET = "UPSTREAM-SECRET-403-BODY-e2e"
  /** A production state system that answers every request 403 with a distinctive text. */
  const upstream = Effect.acquireRelease(
    Effect.async<http.Server>((resume) => {
      const server = http.createServer((_request, response) => {
        response.writeHead(403, { "content-type": "application/json" })
        response.end(JSON.stringify({ Message: `${SECRET}: licence 402-R-0001 of Jane Doe` }))
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  )

  it.live(
    "a production state system's 403 body is in the log with the request id, not in the answer",
    () =>
      Effect.gen(function*() {
        const server = yield* upstream
        const port = (server.address() as { port: number }).port
        const logged: Array<string> = []
        const logger = Logger.make<unknown, void>(({ annotations, message }) => {
          const annotated = HashMap.toEntries(annotations).map(([k, v]) => `${k}=${String(v)}`).join(" ")
          logged.push(`${JSON.stringify(message)} ${annotated}`)
        })
        const app = Http.makeHttpLive({ worker: false }).pipe(
          Layer.provideMerge(Server.layerTest),
          Layer.provideMerge(Crypto.layerTest),
          Layer.provideMerge(TestDatabase.layer),
          Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(
            new Map([
              ["TRACEBRIDGE_PROVIDER_A_BASE_URL", `http://127.0.0.1:${port}/provider_a/{state}`],
              ["PROVIDER_A_VENDOR_KEY", "integrator-vendor-key"]
            ])
          ))),
          Layer.provide(Logger.replace(Logger.defaultLogger, logger))
        )
        const answer = yield* Effect.provide(
          Effect.gen(function*() {
            const { access } = yield* productionSignIn
            return yield* submitLogin(access, {
              provider: "provider_a",
              state: "CO",
              credentials: { user_key: "user_good" }
            })
          }),
          app
        )
        assert.isAtLeast(answer.status, 400, JSON.stringify(answer.body))
        assert.notInclude(JSON.stringify(answer.body), SECRET)
        assert.notInclude(JSON.stringify(answer.body), "Jane Doe")
        const requestId = answer.body.error.request_id as string
        const lines = logged.filter((l) => l.includes(SECRET))
        assert.isAbove(lines.length, 0, `no log line with the upstream text:\n${logged.join("\n")}`)
        assert.isTrue(lines.some((l) => l.includes(requestId)), lines.join("\n"))
      }).pipe(Effect.scoped),
    60_000
  )
})
