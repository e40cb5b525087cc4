/**
 * The provider_a adapter under the upstream rate governor (ADR 0015), against its emulator set to
 * Metrc's rate limit (the descriptor's requests per second, per user key, answered past it with
 * 429 and `Retry-After`). Two ports stand for two API nodes: they share one governor, as the HTTP
 * service's database governor is shared, and read the same licence through two connections on the
 * same user key. The emulator's clock is the TestClock.
 */
import { HttpClient } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { ProviderA, ProviderAConfig } from "@tracebridge/adapter-provider-a"
import type { ProviderPort } from "@tracebridge/core"
import { Session, UpstreamGovernor } from "@tracebridge/core"
import { Registry, Sandbox } from "@tracebridge/sandbox"
import type { Duration } from "effect"
import { Chunk, Clock, Effect, Fiber, Layer, Option, TestClock } from "effect"
import * as Emulator from "../../../src/providers/provider-a/Emulator.js"
import * as Upstream from "../../support/Upstream.js"
import * as A from "./Support.js"

Upstream.useUpstream()

const RATE = ProviderA.descriptor.rateLimit.requestsPerSecond

/** Real time for msw to answer what the adapter sent. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 3)))

/**
 * A sandbox on the TestClock, limited to the descriptor's rate per user key, behind its own host;
 * two ports over one shared governor (the descriptor's pacing: `ProviderAConfig.defaults`). Their
 * HttpClient records when (on the TestClock) each request is sent.
 */
const setup = Effect.gen(function*() {
  yield* TestClock.setTime(A.NOW)
  const clock = yield* Effect.clock
  const sandbox = new Sandbox.Sandbox({
    providers: Registry.installed,
    seed: "42",
    referenceDate: A.REFERENCE,
    now: () => clock.unsafeCurrentTimeMillis()
  })
  Emulator.configure(sandbox, { requestsPerSecond: RATE })
  const upstream = Upstream.make(sandbox)
  const world = sandbox.world("provider_a", "CO", A.good.user_key!)
  const cultivator = world.facilities.find((d) => d.role === "cultivation")!
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
  const port = () =>
    ProviderA.make.pipe(
      Effect.provide(ProviderAConfig.layerTest({ perFacility: ProviderAConfig.defaults.perFacility })),
      Effect.provide(recording),
      Effect.provideService(UpstreamGovernor.UpstreamGovernor, governor)
    )
  const ports: ReadonlyArray<ProviderPort.Service> = [yield* port(), yield* port()]
  const session = (connection: string) =>
    Session.make({
      key: connection,
      provider: "provider_a",
      state: "CO",
      environment: "sandbox",
      credentials: { user_key: A.good.user_key! },
      baseUrl: upstream.baseUrl("provider_a", "CO")
    })
  /** Waits (in real time) until every request sent so far has reached the emulator. */
  const arrived = Effect.gen(function*() {
    yield* settle
    for (let w = 0; w < 500 && upstream.log.length < sentAt.length; w++) yield* settle
  })
  /**
   * Moves the TestClock in steps until `fiber` is done (or `limit` steps have passed). Each step
   * first lets every request sent reach the emulator, which so counts it in the second it was sent.
   */
  const drive = <X, E>(fiber: Fiber.Fiber<X, E>, step: Duration.DurationInput, limit: number) =>
    Effect.gen(function*() {
      for (let i = 0; i < limit && Option.isNone(yield* Fiber.poll(fiber)); i++) {
        yield* arrived
        yield* TestClock.adjust(step)
      }
    })
  return { upstream, cultivator, ports, session, sentAt, arrived, drive }
})

describe("ProviderA under the upstream rate governor", () => {
  it.scoped(
    "two ports reading one licence never go past the descriptor's rate: no 429, reads spaced out",
    () =>
      Effect.gen(function*() {
        const { cultivator, drive, ports, sentAt, session, upstream } = yield* setup
        const item = cultivator.items[0]!
        const reads = 60
        const fiber = yield* Effect.fork(
          Effect.forEach(
            [...ports.entries()].flatMap(([n, port]) => Array.from({ length: reads }, () => [n, port] as const)),
            ([n, port]) => port.get("items", session(`connection-${n}`), cultivator.facility.id, item.id),
            { concurrency: "unbounded" }
          )
        )
        yield* drive(fiber, "10 millis", 1_000)
        const items = yield* Fiber.join(fiber)
        assert.strictEqual(items.length, 2 * reads)
        const sent = upstream.log.filter((l) => l.startsWith(`GET /items/v2/${item.provider_item_id}?`))
        assert.strictEqual(sent.length, 2 * reads, "no request was refused with 429 and sent again")
        // sent one every 20 ms, whichever port sent it: never more than 50 in any one second
        const times = sentAt.slice().sort((a, b) => a - b)
        assert.strictEqual(times.length, 2 * reads)
        for (let i = 1; i < times.length; i++) assert.isAtLeast(times[i]! - times[i - 1]!, 1000 / RATE)
        for (let i = RATE; i < times.length; i++) assert.isAtLeast(times[i]! - times[i - RATE]!, 1000)
      }),
    { timeout: 30_000 }
  )

  it.scoped("a 429 with Retry-After pauses the licence for every port until it ends", () =>
    Effect.gen(function*() {
      const { arrived, cultivator, drive, ports, session, upstream } = yield* setup
      const [first, second] = ports
      const items = cultivator.items
      upstream.failNext(() =>
        A.json({ Message: "The limit of API calls allowed has been exceeded." }, 429, {
          "retry-after": "2"
        }), { path: /^\/items\// })
      const refused = yield* Effect.fork(
        first!.get("items", session("connection-0"), cultivator.facility.id, items[0]!.id)
      )
      yield* arrived
      assert.strictEqual(upstream.log.length, 1)
      // the adapter pauses the bucket, then sleeps until Retry-After ends before it tries again
      const retryAt = A.NOW + 2_000
      for (let i = 0; i < 500 && !Chunk.some(yield* TestClock.sleeps(), (t) => t >= retryAt); i++) yield* settle
      const other = yield* Effect.fork(
        second!.get("items", session("connection-1"), cultivator.facility.id, items[1]!.id)
      )
      for (let i = 0; i < 19; i++) {
        yield* TestClock.adjust("100 millis")
        yield* arrived
      }
      assert.strictEqual(upstream.log.length, 1, "nothing is sent to the licence before Retry-After (2 s) ends")
      yield* drive(other, "100 millis", 100)
      yield* drive(refused, "100 millis", 100)
      assert.strictEqual((yield* Fiber.join(other)).id, items[1]!.id)
      assert.strictEqual((yield* Fiber.join(refused)).id, items[0]!.id)
      assert.strictEqual(upstream.log.length, 3)
    }), { timeout: 30_000 })
})
