/**
 * The access log: every failure and every 4xx/5xx, and one success in `accessLogEvery`; URLs
 * redacted (the redaction itself is in Secrets.test.ts).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Http } from "@tracebridge/http"
import { Effect, Layer, Logger } from "effect"
import * as RepoMemory from "../src/persistence/RepoMemory.js"
import * as Crypto from "../src/services/Crypto.js"
import { call } from "./support/TestApp.js"

const lines: Array<{ readonly status: unknown; readonly url: unknown }> = []
const recorder = Logger.make(({ annotations }) => {
  const entries = new Map(annotations)
  if (entries.has("http.status")) lines.push({ status: entries.get("http.status"), url: entries.get("http.url") })
})

const app = (every: number) =>
  Http.makeHttpLive({ worker: false, accessLogEvery: every }).pipe(
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(RepoMemory.layer),
    Layer.provide(Logger.replace(Logger.defaultLogger, recorder))
  )

describe("RequestLog", () => {
  it.effect("logs one success in every N, and every error", () =>
    Effect.gen(function*() {
      lines.length = 0
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
    }).pipe(Effect.provide(app(3))))

  it.effect("with 0 logs errors only, with 1 every response", () =>
    Effect.gen(function*() {
      lines.length = 0
      yield* Effect.provide(
        Effect.zipRight(call("GET", "/healthz"), call("GET", "/v1/connections")),
        app(0)
      )
      assert.deepStrictEqual(lines.map((l) => l.status), [401])
      lines.length = 0
      yield* Effect.provide(Effect.zipRight(call("GET", "/healthz"), call("GET", "/healthz")), app(1))
      assert.deepStrictEqual(lines.map((l) => l.status), [200, 200])
    }))
})
