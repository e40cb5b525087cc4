/**
 * The provider_a adapter under the upstream rate governor (ADR 0015), against its emulator set to
 * Metrc's rate limit (the descriptor's requests per second, per user key, answered past it with
 * 429 and `Retry-After`). Two ports stand for two API nodes: they share one governor, as the HTTP
 * service's database governor is shared, and read the same licence through two connections on the
 * same user key. The emulator's clock is the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderA, ProviderAConfig } from "@tracebridge/adapter-provider-a"
import type { ProviderPort } from "@tracebridge/core"
import { Session, UpstreamGovernor } from "@tracebridge/core"
import { Sandbox } from "@tracebridge/sandbox"
import * as Emulator from "@tracebridge/sandbox/providers/provider-a/Emulator"
import type { Duration } from "effect"
import { Effect, Fiber, Option, TestClock } from "effect"
import * as Upstream from "../../support/Upstream.js"
import * as A from "./Support.js"

Upstream.useUpstream()

const RATE = ProviderA.descriptor.rateLimit.requestsPerSecond

/** Real time for msw to answer what the adapter sent in this step. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 3)))

/**
 * A sandbox on the TestClock, limited to the descriptor's rate per user key, behind its own host;
 * two ports over one shared governor (the descriptor's pacing: `ProviderAConfig.defaults`).
 */
const setup = Effect.gen(function*() {
  yield* TestClock.setTime(A.NOW)
  const clock = yield* Effect.clock
  const sandbox = new Sandbox.Sandbox({
    seed: "42",
    referenceDate: A.REFERENCE,
    now: () => clock.unsafeCurrentTimeMillis()
  })
  Emulator.configure(sandbox, { requestsPerSecond: RATE })
  const upstream = Upstream.make(sandbox)
  const world = sandbox.world("provider_a", "CO", A.good.user_key!)
  const cultivator = world.facilities.find((d) => d.role === "cultivation")!
  const governor = yield* UpstreamGovernor.makeMemory
  const port = () =>
    ProviderA.make.pipe(
      Effect.provide(ProviderAConfig.layerTest({ perFacility: ProviderAConfig.defaults.perFacility })),
      Effect.provide(Upstream.httpClient),
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
  return { upstream, cultivator, ports, session }
})

/** Moves the TestClock in steps until `fiber` is done (or `limit` has passed); answers the time it took. */
const drive = <X, E>(fiber: Fiber.Fiber<X, E>, step: Duration.DurationInput, limit: number) =>
  Effect.gen(function*() {
    const start = yield* TestClock.currentTimeMillis
    for (let i = 0; i < limit && Option.isNone(yield* Fiber.poll(fiber)); i++) {
      yield* settle
      yield* TestClock.adjust(step)
    }
    return (yield* TestClock.currentTimeMillis) - start
  })

describe("ProviderA under the upstream rate governor", () => {
  it.scoped(
    "two ports reading one licence never go past the descriptor's rate: no 429, reads spaced out",
    () =>
      Effect.gen(function*() {
        const { cultivator, ports, session, upstream } = yield* setup
        const item = cultivator.items[0]!
        const reads = 60
        const fiber = yield* Effect.fork(
          Effect.forEach(
            [...ports.entries()].flatMap(([n, port]) => Array.from({ length: reads }, () => [n, port] as const)),
            ([n, port]) => port.get("items", session(`connection-${n}`), cultivator.facility.id, item.id),
            { concurrency: "unbounded" }
          )
        )
        const took = yield* drive(fiber, "10 millis", 1_000)
        const items = yield* Fiber.join(fiber)
        assert.strictEqual(items.length, 2 * reads)
        const sent = upstream.log.filter((l) => l.startsWith(`GET /items/v2/${item.provider_item_id}?`))
        assert.strictEqual(sent.length, 2 * reads, "no request was refused with 429 and sent again")
        // 120 requests at 50 a second, spaced 20 ms apart, take 2.38 s: never a burst
        assert.isAtLeast(took, (2 * reads - 1) * 1000 / RATE - 10)
      }),
    { timeout: 30_000 }
  )

  it.scoped("a 429 with Retry-After pauses the licence for every port until it ends", () =>
    Effect.gen(function*() {
      const { cultivator, ports, session, upstream } = yield* setup
      const [first, second] = ports
      const items = cultivator.items
      upstream.failNext(() =>
        A.json({ Message: "The limit of API calls allowed has been exceeded." }, 429, {
          "retry-after": "2"
        }), { path: /^\/items\// })
      const refused = yield* Effect.fork(
        first!.get("items", session("connection-0"), cultivator.facility.id, items[0]!.id)
      )
      for (let i = 0; i < 200 && upstream.log.length === 0; i++) yield* settle
      assert.strictEqual(upstream.log.length, 1)
      // the 429's answer reaches the adapter, which pauses the bucket before it waits
      for (let i = 0; i < 10; i++) yield* settle
      const other = yield* Effect.fork(
        second!.get("items", session("connection-1"), cultivator.facility.id, items[1]!.id)
      )
      for (let i = 0; i < 19; i++) {
        yield* TestClock.adjust("100 millis")
        yield* settle
      }
      assert.strictEqual(upstream.log.length, 1, "nothing is sent to the licence before Retry-After (2 s) ends")
      yield* drive(other, "100 millis", 100)
      yield* drive(refused, "100 millis", 100)
      assert.strictEqual((yield* Fiber.join(other)).id, items[1]!.id)
      assert.strictEqual((yield* Fiber.join(refused)).id, items[0]!.id)
      assert.strictEqual(upstream.log.length, 3)
    }), { timeout: 30_000 })
})
