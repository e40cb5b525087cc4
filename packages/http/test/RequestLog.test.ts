/**
 * The access log: every failure and every 4xx/5xx, and one success in `accessLogEvery`; secrets
 * redacted by value wherever they are in the line (the value redaction itself is in Redact.test.ts,
 * the name-based one in Secrets.test.ts).
 */
import { HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Http, RequestLog } from "@tracebridge/http"
import { Effect, Layer, Logger } from "effect"
import * as Crypto from "../src/services/Crypto.js"
import { call } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

/**
 * A recorder per test (the tests run concurrently): the access-log lines' status and URL, and
 * every line as written, in logfmt (message, cause, annotations, spans) and structured JSON.
 */
const recording = () => {
  const lines: Array<{ readonly status: unknown; readonly url: string }> = []
  const rendered: Array<string> = []
  const recorder = Logger.make((options) => {
    const entries = new Map(options.annotations)
    if (entries.has("http.status")) {
      lines.push({ status: entries.get("http.status"), url: String(entries.get("http.url")) })
    }
    rendered.push(Logger.logfmtLogger.log(options), JSON.stringify(Logger.structuredLogger.log(options)))
  })
  return { lines, rendered, layer: Logger.replace(Logger.defaultLogger, recorder) }
}

const app = (every: number, log: ReturnType<typeof recording>) =>
  Http.makeHttpLive({ worker: false, accessLogEvery: every }).pipe(
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.layer),
    Layer.provide(log.layer)
  )

describe("RequestLog", () => {
  it.effect("every access-log line carries the request id the client was told (issue #30)", () => {
    const log = recording()
    return Effect.gen(function*() {
      const answers = [
        yield* call("GET", "/healthz"),
        yield* call("GET", "/v1/nothing-here"),
        yield* call("GET", "/v1/connections"),
        yield* call("POST", "/v1/oauth/token", { raw: "{", contentType: "application/json" })
      ]
      const logged = log.rendered.filter((line) => line.startsWith("timestamp=") && line.includes("http.status"))
      assert.strictEqual(logged.length, answers.length)
      for (const answer of answers) {
        const id = answer.headers["x-request-id"]!
        assert.match(id, /^req_/)
        assert.isTrue(logged.some((line) => line.includes(`request_id=${id}`)), `${id} in ${logged.join("\n")}`)
      }
    }).pipe(Effect.provide(app(1, log)))
  })

  it.effect("logs one success in every N, and every error", () => {
    const log = recording()
    const lines = log.lines
    return Effect.gen(function*() {
      for (let i = 0; i < 7; i++) yield* call("GET", "/healthz")
      yield* call("GET", "/v1/nothing-here")
      yield* call("GET", "/v1/connections")
      assert.deepStrictEqual(lines.map((l) => [l.status, l.url]), [
        [200, "/healthz"],
        [200, "/healthz"],
        [200, "/healthz"],
        [404, "/v1/nothing-here"],
        [401, "/v1/connections"]
      ])
    }).pipe(Effect.provide(app(3, log)))
  })

  it.effect("with 0 logs errors only, with 1 every response", () => {
    const log = recording()
    const lines = log.lines
    return Effect.gen(function*() {
      yield* Effect.provide(
        Effect.zipRight(call("GET", "/healthz"), call("GET", "/v1/connections")),
        app(0, log)
      )
      assert.deepStrictEqual(lines.map((l) => l.status), [401])
      lines.length = 0
      yield* Effect.provide(Effect.zipRight(call("GET", "/healthz"), call("GET", "/healthz")), app(1, log))
      assert.deepStrictEqual(lines.map((l) => l.status), [200, 200])
    })
  })

  it.effect("writes a secret anywhere in the URL as its prefix and a marker, whatever the parameter's name", () => {
    const log = recording()
    const { lines, rendered } = log
    return Effect.gen(function*() {
      // Each token as issued: a prefix, then the secret part (here recognisable text in base64url).
      const parts = {
        link: ["link-sandbox-", "Qm9vYmFyYmF6cXV4LWxpbmstc2VjcmV0LXBhcnQ"],
        linkProduction: ["link-production-", "UHJvZHVjdGlvbi1saW5rLXNlY3JldA"],
        connection: ["tb_ct_", "Y29ubmVjdGlvbi10b2tlbi1zZWNyZXQtcGFydA"],
        webhook: ["whsec_", "d2ViaG9vay1zaWduaW5nLXNlY3JldC1wYXJ0"],
        access: ["tb_at_", "YWNjZXNzLXRva2VuLXNlY3JldC1wYXJ0LXgx"],
        refresh: ["tb_rt_", "cmVmcmVzaC10b2tlbi1zZWNyZXQtcGFydA"],
        client: ["tb_secret_", "Y2xpZW50LXNlY3JldC1zZWNyZXQtcGFydA"],
        public: ["public-sandbox-", "cHVibGljLXRva2VuLXNlY3JldC1wYXJ0"],
        publicProduction: ["public-production-", "cHJvZC1wdWJsaWMtc2VjcmV0"]
      } as const
      const secrets = Object.fromEntries(
        Object.entries(parts).map(([name, [prefix, secret]]) => [name, `${prefix}${secret}`])
      ) as Record<keyof typeof parts, string>
      yield* call("GET", `/connect/session?lt=${secrets.link}`)
      yield* call("GET", `/v1/nothing/${secrets.connection}?q=${secrets.webhook}&per_page=2`)
      yield* call("GET", `/v1/connections/${secrets.access}/x;${secrets.refresh}?a=b&${secrets.client}`)
      yield* call("GET", `/v1/x?note=before:${secrets.public}:after&p=${secrets.linkProduction}`)
      yield* call("GET", `/v1/x?lt=${encodeURIComponent(secrets.publicProduction)}`)
      yield* call("GET", `/v1/x?lt=${secrets.link.replaceAll("-", "%2D")}`)
      assert.strictEqual(lines.length, 6)
      const output = rendered.join("\n")
      for (const [name, [, secret]] of Object.entries(parts)) {
        assert.notInclude(output, secret.slice(0, 8), name)
      }
      assert.include(lines[0]!.url, "lt=link-sandbox-[REDACTED]")
      assert.include(lines[1]!.url, "/v1/nothing/tb_ct_[REDACTED]?q=whsec_[REDACTED]&per_page=2")
      assert.include(lines[2]!.url, "tb_at_[REDACTED]/x;tb_rt_[REDACTED]?a=b&tb_secret_[REDACTED]")
      assert.include(lines[3]!.url, "note=before:public-sandbox-[REDACTED]:after&p=link-production-[REDACTED]")
      assert.include(lines[4]!.url, "lt=public-production-[REDACTED]")
      assert.include(lines[5]!.url, "lt=link-sandbox-[REDACTED]")
    }).pipe(Effect.provide(app(1, log)))
  })

  const secret = "RGVmZWN0LXdpdGgtYS10b2tlbi1pbnNpZGU"
  it.effect("writes a token in a failure's cause as its prefix and the marker", () => {
    const log = recording()
    const { lines, rendered } = log
    return Effect.gen(function*() {
      const answer = yield* call("GET", "/anything")
      assert.strictEqual(answer.status, 500)
      assert.strictEqual(lines.length, 1)
      const output = rendered.join("\n")
      assert.include(output, "upstream refused tb_ct_[REDACTED]")
      assert.include(output, "caused by whsec_[REDACTED]")
      assert.notInclude(output, secret.slice(0, 8))
    }).pipe(
      Effect.provide(
        HttpServer.serve(
          Effect.zipRight(
            Effect.die(
              new Error(`upstream refused tb_ct_${secret}`, { cause: new Error(`caused by whsec_${secret}`) })
            ),
            HttpServerResponse.empty()
          ),
          RequestLog.logger
        ).pipe(
          Layer.provideMerge(NodeHttpServer.layerTest),
          Layer.provide(log.layer)
        )
      )
    )
  })
})
