/**
 * The secret search: a full flow through the real server over SQLite (client credentials, an access
 * and refresh token, a link token, a sandbox public token with a distinctive provider login, the
 * exchange and its connection token, reads with both tokens, a webhook subscription, a simulate and
 * a signed delivery, a refresh), recording every log line at every level (message, cause,
 * annotations, spans) and every response's status line, headers and body, plus every request the
 * webhook receiver got. Then every secret used is searched for everywhere:
 *
 * - a secret returned once by design (the token endpoint's access and refresh tokens, the link
 *   token, the public token, the exchange's connection token, the webhook's `whsec_` secret) is in
 *   that one response only;
 * - the client secret and the provider login are in no response, no log line and no delivery;
 * - none of them is in the database file in plain text.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap, Http } from "@tracebridge/http"
import { Effect, Layer, Logger, LogLevel, Option, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import * as Database from "../src/persistence/Database.js"
import * as RequestLog from "../src/RequestLog.js"
import * as Crypto from "../src/services/Crypto.js"
import { WebhookDispatcher } from "../src/services/WebhookDispatcher.js"
import { receiver } from "./support/Receiver.js"

const T0 = Date.parse("2026-01-15T12:00:00.000Z")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-secrets-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** A sandbox login no descriptor, hint or fixture contains (any `user_good…` key is a good login). */
const providerLogin = "user_good_leakcheck_5b1e9d27"
const widgetLogin = "user_good_leakcheck_widget_c4a81f"

/** Every log line, at every level, in two renderings (structured JSON, and logfmt with spans). */
const logs: Array<string> = []
const recorder = Logger.zip(Logger.structuredLogger, Logger.logfmtLogger).pipe(
  Logger.map(([structured, logfmt]) => void logs.push(JSON.stringify(structured), logfmt))
)
const logging = Layer.mergeAll(Logger.add(recorder), Logger.minimumLogLevel(LogLevel.All))

const app = Http.makeHttpLive({ worker: false, accessLogEvery: 1 }).pipe(
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(Layer.orDie(Database.layerSqlite(path.join(dir, Database.sqliteFileName))))
)

interface Exchange {
  readonly label: string
  readonly text: string
  readonly body: any
}

describe("Secrets", () => {
  it.scoped(
    "no secret used in a full flow shows in a log line, another response or the database",
    () =>
      Effect.gen(function*() {
        const responses: Array<Exchange> = []
        const call = (label: string, method: "GET" | "POST", url: string, token?: string, json?: unknown) =>
          Effect.gen(function*() {
            const client = yield* HttpClient.HttpClient
            let request = method === "GET" ? HttpClientRequest.get(url) : HttpClientRequest.post(url)
            if (token !== undefined) request = HttpClientRequest.bearerToken(request, token)
            if (json !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, json)
            const response = yield* client.execute(request)
            const body = yield* response.text
            const text = `${response.status}\n${JSON.stringify(response.headers)}\n${body}`
            const parsed = (response.headers["content-type"] ?? "").includes("json") ? JSON.parse(body) : body
            responses.push({ label, text, body: parsed })
            assert.isBelow(response.status, 300, `${label}: ${body}`)
            return parsed
          }).pipe(Effect.scoped)

        const hooks = yield* receiver([200])
        const client = Option.getOrThrow(yield* Bootstrap.ensureSandboxClient)
        const tokens = yield* call("token", "POST", "/v1/oauth/token", undefined, {
          grant_type: "client_credentials",
          ...client
        })
        const access: string = tokens.access_token
        const refresh: string = tokens.refresh_token
        const link = yield* call("link", "POST", "/v1/link/token/create", access, { external_id: "leak-check" })
        const publicToken = yield* call("public", "POST", "/v1/sandbox/public_token/create", access, {
          provider: "provider_a",
          state: "CO",
          credentials: { user_key: providerLogin }
        })
        const exchanged = yield* call("exchange", "POST", "/v1/link/token/exchange", access, {
          public_token: publicToken.data.public_token
        })
        const connection: string = exchanged.data.connection_id
        const connectionToken: string = exchanged.data.connection_token
        const facilities = yield* call("facilities", "GET", `/v1/connections/${connection}/facilities`, access)
        yield* call(
          "packages",
          "GET",
          `/v1/connections/${connection}/facilities/${facilities.data[0].id}/packages?per_page=2`,
          connectionToken
        )
        yield* call("connection", "GET", `/v1/connections/${connection}`, connectionToken)
        const hook = yield* call("webhook", "POST", "/v1/webhooks/", access, {
          url: hooks.url,
          events: ["lab_result.received"]
        })
        yield* call("webhooks", "GET", "/v1/webhooks/", access)
        yield* call("simulate", "POST", `/v1/sandbox/${connection}/simulate`, access, {
          scenario: "lab_result_received",
          params: {}
        })
        assert.strictEqual(yield* Effect.flatMap(WebhookDispatcher, (d) => d.runDue), 1)
        yield* call("deliveries", "GET", `/v1/webhooks/${hook.data.id}/deliveries`, access)
        // the Connect widget's own flow: the hosted page and its API, authenticated by a link token
        const widgetLink = yield* call("widget link", "POST", "/v1/link/token/create", access, {
          external_id: "leak-check-widget"
        })
        const widgetToken: string = widgetLink.data.link_token
        yield* call("connect page", "GET", `/connect?link_token=${encodeURIComponent(widgetToken)}`)
        const session = yield* call(
          "connect session",
          "GET",
          `/connect/session?link_token=${encodeURIComponent(widgetToken)}`
        )
        const submitted = yield* call("connect submit", "POST", "/connect/submit", undefined, {
          link_token: widgetToken,
          link_session_id: session.data.link_session_id,
          provider: "provider_a",
          state: "CO",
          credentials: { user_key: widgetLogin }
        })
        const refreshed = yield* call("refresh", "POST", "/v1/oauth/token", undefined, {
          grant_type: "refresh_token",
          refresh_token: refresh
        })
        yield* call("after refresh", "GET", "/v1/connections", refreshed.access_token)

        const secrets: ReadonlyArray<{ readonly name: string; readonly value: string; readonly shownIn?: string }> = [
          { name: "client secret", value: client.client_secret },
          { name: "access token", value: access, shownIn: "token" },
          { name: "refresh token", value: refresh, shownIn: "token" },
          { name: "refreshed access token", value: refreshed.access_token, shownIn: "refresh" },
          { name: "rotated refresh token", value: refreshed.refresh_token, shownIn: "refresh" },
          { name: "link token", value: link.data.link_token, shownIn: "link" },
          { name: "public token", value: publicToken.data.public_token, shownIn: "public" },
          { name: "connection token", value: connectionToken, shownIn: "exchange" },
          { name: "webhook secret", value: hook.data.secret, shownIn: "webhook" },
          { name: "provider login", value: providerLogin },
          { name: "widget link token", value: widgetToken, shownIn: "widget link" },
          { name: "widget public token", value: submitted.data.public_token, shownIn: "connect submit" },
          { name: "widget provider login", value: widgetLogin }
        ]
        for (const s of secrets) assert.isTrue(typeof s.value === "string" && s.value.length >= 20, s.name)
        assert.match(connectionToken, /^tb_ct_/)
        assert.match(hook.data.secret, /^whsec_/)

        // the recorder saw the server's own logs (the request logger, at least)
        assert.isAbove(logs.length, responses.length, "the log recorder captured the server's lines")
        assert.strictEqual(hooks.received.length, 1)
        const deliveries = hooks.received.map((r) => `${JSON.stringify(r.headers)}\n${r.body}`)

        const dbFiles = fs.readdirSync(dir).map((f) => path.join(dir, f))
        assert.isAbove(dbFiles.length, 0)
        const db = dbFiles.map((f) => fs.readFileSync(f).toString("latin1")).join("\n")
        assert.include(db, "leak-check", "the database file is readable as text (the external id is there)")

        for (const s of secrets) {
          for (const r of responses) {
            if (r.label === s.shownIn) assert.include(r.text, s.value, `${s.name} in the ${r.label} response`)
            else assert.notInclude(r.text, s.value, `${s.name} leaked in the ${r.label} response`)
          }
          for (const line of logs) assert.notInclude(line, s.value, `${s.name} leaked in a log line`)
          for (const d of deliveries) assert.notInclude(d, s.value, `${s.name} leaked in a webhook delivery`)
          assert.notInclude(db, s.value, `${s.name} stored in plain text`)
        }
      }).pipe(
        (program) => Effect.zipRight(TestClock.setTime(T0), Effect.provide(program, app)),
        Effect.provide(logging)
      ),
    { timeout: 60_000 }
  )
})

describe("RequestLog.redactUrl", () => {
  it("redacts the values of query parameters that may carry a secret, and keeps the rest", () => {
    assert.strictEqual(
      RequestLog.redactUrl("/connect?link_token=link-sandbox-abc&theme=dark"),
      "/connect?link_token=REDACTED&theme=dark"
    )
    assert.strictEqual(
      RequestLog.redactUrl("/x?client_secret=s&api_key=k&per_page=2"),
      "/x?client_secret=REDACTED&api_key=REDACTED&per_page=2"
    )
    assert.strictEqual(RequestLog.redactUrl("/v1/connections?per_page=2"), "/v1/connections?per_page=2")
    assert.strictEqual(RequestLog.redactUrl("/v1/connections"), "/v1/connections")
  })
})
