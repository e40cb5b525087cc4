/**
 * The provider_b session client under the upstream rate governor (ADR 0015), against the emulator:
 * two clients stand for two API nodes sharing one governor, with two connections on one company
 * licence (UBI). Every POST, the login included, is spaced at the descriptor's rate, and a 429 with
 * `Retry-After` pauses the licence for both.
 */
import { HttpClient } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { ProviderB, ProviderBClient, Wire } from "@tracebridge/adapter-provider-b"
import { UpstreamGovernor } from "@tracebridge/core"
import { Clock, Effect, Fiber, Layer, Option, TestClock } from "effect"
import * as Upstream from "../../support/Upstream.js"
import { make, onAction } from "./Support.js"

Upstream.useUpstream()

const Vendors = Wire.syncAnswer("sync_vendor")
const op = { operation: "test.call" }
const RATE = ProviderB.descriptor.rateLimit.requestsPerSecond

/** Real time, so that a request in flight reaches msw (the test clock does not move it). */
const tick = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))

/** Moves the TestClock in steps of 100 ms until `fiber` is done. */
const drive = <X, E>(fiber: Fiber.Fiber<X, E>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100 && Option.isNone(yield* Fiber.poll(fiber)); i++) {
      yield* tick
      yield* TestClock.adjust("100 millis")
    }
    return yield* Fiber.join(fiber)
  })

/**
 * A fresh upstream, and two clients over it sharing one governor; their HttpClient records when
 * (on the TestClock) each request is sent.
 */
const setup = Effect.gen(function*() {
  const b = make()
  const governor = yield* UpstreamGovernor.makeMemory
  const sentAt: Array<number> = []
  const recording = Layer.effect(
    HttpClient.HttpClient,
    Effect.map(
      HttpClient.HttpClient,
      (client) =>
        HttpClient.tapRequest(client, () =>
          Effect.map(Clock.currentTimeMillis, (t) => {
            sentAt.push(t)
          }))
    )
  ).pipe(Layer.provide(Upstream.httpClient))
  const client = () =>
    ProviderBClient.make.pipe(
      Effect.provide(recording),
      Effect.provideService(UpstreamGovernor.UpstreamGovernor, governor)
    )
  return { b, sentAt, clients: [yield* client(), yield* client()] as const }
})

describe("ProviderBClient under the upstream rate governor", () => {
  it.effect("two clients on one licence are spaced at the descriptor's rate, logins included", () =>
    Effect.gen(function*() {
      const { b, clients, sentAt } = yield* setup
      const calls = clients.flatMap((client, n) =>
        [1, 2].map(() => client.call(b.session(`connection-${n}`), "sync_vendor", { download: 1 }, Vendors, op))
      )
      const fiber = yield* Effect.fork(Effect.all(calls, { concurrency: "unbounded" }))
      yield* drive(fiber)
      // two logins (one per connection) and four calls: six requests, one every 200 ms
      assert.strictEqual(b.actions().length, 6)
      assert.deepStrictEqual(sentAt, Array.from({ length: 6 }, (_, i) => i * 1000 / RATE))
    }))

  it.effect("a 429 with Retry-After pauses the licence for every client until it ends", () =>
    Effect.gen(function*() {
      const { b, clients } = yield* setup
      const [first, second] = clients
      yield* drive(
        yield* Effect.fork(Effect.all([
          first.login(b.session("connection-0")),
          second.login(b.session("connection-1"))
        ], { concurrency: "unbounded" }))
      )
      yield* TestClock.adjust("1 second")
      b.upstream.failNext(
        () => new Response("Too Many Requests", { status: 429, headers: { "retry-after": "3" } }),
        { match: onAction("sync_vendor") }
      )
      const refused = yield* Effect.flip(first.call(b.session("connection-0"), "sync_vendor", {}, Vendors, op))
      assert.strictEqual(refused._tag, "ProviderRateLimited")
      const fiber = yield* Effect.fork(second.call(b.session("connection-1"), "sync_vendor", {}, Vendors, op))
      for (let i = 0; i < 29; i++) {
        yield* tick
        yield* TestClock.adjust("100 millis")
      }
      yield* tick
      assert.strictEqual(b.actions().filter((a) => a === "sync_vendor").length, 1, "held for Retry-After (3 s)")
      yield* drive(fiber)
      assert.strictEqual(b.actions().filter((a) => a === "sync_vendor").length, 2)
    }))
})
