/**
 * `TRACEBRIDGE_LOG_FORMAT` (issue #32): `json` writes one JSON object per line, with the fields
 * `docs/operations.md` lists, `trace_id`/`span_id` when the fiber has a span, and the same
 * redaction as the text lines; a value other than `text` or `json` stops the start-up with a line
 * naming the variable.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Logger } from "effect"
import { randomBytes } from "node:crypto"
import * as LogFormat from "../src/LogFormat.js"
import * as Redact from "../src/Redact.js"
import { freePort, startMain, until } from "./support/Process.js"

const secret = "configured-vendor-key-0123456789"
const token = "tb_at_Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA"

/** Runs `self` with `format` as `TRACEBRIDGE_LOG_FORMAT` and a redacting console recording each line. */
const capture = <A, E>(value: string | undefined, self: Effect.Effect<A, E>) => {
  const lines: Array<string> = []
  const base = {
    ...globalThis.console,
    log: (line: string) => lines.push(line),
    error: (line: string) => lines.push(line)
  }
  const provider = ConfigProvider.fromJson(value === undefined ? {} : { TRACEBRIDGE_LOG_FORMAT: value })
  return LogFormat.logging(self).pipe(
    // the text logger `NodeRuntime.runMain` installs
    Effect.provide(Logger.replace(Logger.defaultLogger, Logger.prettyLoggerDefault)),
    Effect.withConsole(Redact.console(Redact.make([secret]), base)),
    Effect.withConfigProvider(provider),
    Effect.exit,
    Effect.map((exit) => ({ exit, lines }))
  )
}

describe("TRACEBRIDGE_LOG_FORMAT=json", () => {
  it.effect("writes one JSON object per line with the fields, and no secret from a message or annotation", () =>
    Effect.gen(function*() {
      const { lines } = yield* capture(
        "json",
        Effect.logWarning(`refused ${token} and ${secret}`).pipe(
          Effect.annotateLogs({ request_id: "req_1", leaked: `key=${secret}`, url: `/connect?t=${token}` }),
          Effect.withLogSpan("http.span.1")
        )
      )
      assert.strictEqual(lines.length, 1, lines.join("\n"))
      const line = lines[0]!
      assert.notInclude(line, secret)
      assert.notInclude(line, token)
      assert.notInclude(line, token.slice(6))
      const parsed = JSON.parse(line)
      assert.strictEqual(parsed.level, "WARN")
      assert.strictEqual(parsed.message, `refused tb_at_${Redact.marker} and ${Redact.marker}`)
      assert.match(parsed.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.match(parsed.fiber, /^#\d+$/)
      assert.strictEqual(parsed.annotations.request_id, "req_1")
      assert.strictEqual(parsed.annotations.leaked, `key=${Redact.marker}`)
      assert.strictEqual(parsed.annotations.url, `/connect?t=tb_at_${Redact.marker}`)
      assert.isNumber(parsed.spans["http.span.1"])
      assert.notProperty(parsed, "trace_id")
      assert.notProperty(parsed, "span_id")
    }))

  it.effect("carries the current span's trace_id and span_id", () =>
    Effect.gen(function*() {
      let ids: { traceId: string; spanId: string } | undefined
      const { lines } = yield* capture(
        "json",
        Effect.gen(function*() {
          const span = yield* Effect.currentSpan
          ids = { traceId: span.traceId, spanId: span.spanId }
          yield* Effect.logInfo("inside a span")
        }).pipe(Effect.withSpan("request"))
      )
      assert.isDefined(ids)
      const parsed = JSON.parse(lines[0]!)
      assert.strictEqual(parsed.trace_id, ids!.traceId)
      assert.strictEqual(parsed.span_id, ids!.spanId)
      assert.isAbove(parsed.trace_id.length, 0)
    }))

  it.effect("text (and no value) keeps the text line; another value fails naming the variable", () =>
    Effect.gen(function*() {
      for (const value of [undefined, "text"]) {
        const { lines } = yield* capture(value, Effect.logInfo("plain"))
        assert.strictEqual(lines.length, 1)
        assert.throws(() => JSON.parse(lines[0]!))
        assert.include(lines[0]!, "plain")
      }
      const { exit, lines } = yield* capture("xml", Effect.logInfo("never"))
      assert.isTrue(Exit.isFailure(exit))
      assert.isFalse(lines.some((l) => l.includes("never")))
      assert.isTrue(lines.some((l) => l.includes("TRACEBRIDGE_LOG_FORMAT") && l.includes("must be text or json")))
    }))
})

describe("the server with TRACEBRIDGE_LOG_FORMAT", () => {
  const run = async (format: string) => {
    const port = await freePort()
    const server = startMain({
      PORT: String(port),
      TRACEBRIDGE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      TRACEBRIDGE_ACCESS_LOG_EVERY: "1",
      TRACEBRIDGE_LOG_FORMAT: format
    }, "tb-logformat-")
    return { port, ...server }
  }

  it("json: the server's own lines are JSON objects", async () => {
    const server = await run("json")
    try {
      await until("the server to answer", async () => {
        if (server.child.exitCode !== null) throw new Error(`exited early:\n${server.output()}`)
        return fetch(`http://127.0.0.1:${server.port}/livez`).then((r) => r.ok, () => false)
      }, 20_000)
      await until("the access log line", () => server.output().includes("/livez"))
      const lines = server.output().split("\n").filter((l) => l.startsWith("{"))
      const parsed = lines.map((l) => JSON.parse(l))
      assert.isTrue(parsed.some((p) => String(p.message).startsWith("Tracebridge API on")), server.output())
      const access = parsed.find((p) => p.annotations?.["http.url"] === "/livez")
      assert.isDefined(access, server.output())
      assert.strictEqual(access.annotations["http.status"], 200)
      server.child.kill("SIGTERM")
      assert.strictEqual(await server.exited, 0)
    } finally {
      server.child.kill("SIGKILL")
    }
  }, 40_000)

  it("another value: exits 1 with a line naming the variable", async () => {
    const server = await run("yaml")
    try {
      assert.strictEqual(await server.exited, 1)
      assert.include(server.output(), "TRACEBRIDGE_LOG_FORMAT")
      assert.include(server.output(), "must be text or json")
      assert.notInclude(server.output(), "Tracebridge API on")
    } finally {
      server.child.kill("SIGKILL")
    }
  }, 40_000)
})
