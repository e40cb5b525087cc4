/**
 * The upstream rate governor's database store (`UpstreamGovernor.makeDatabase` over
 * `UpstreamBuckets`), on SQLite: two governors on one database (two API nodes) share one bucket
 * per key, a pause set by one holds the other, and the governor fails open when the store fails.
 * The store's statements run on Postgres too in the persistence suite (`npm run test:pg`).
 */
import { assert, describe, it } from "@effect/vitest"
import { UpstreamGovernor } from "@tracebridge/http"
import { Clock, Effect, Fiber, Layer, Logger, Option, TestClock } from "effect"
import { UpstreamBuckets } from "../src/persistence/UpstreamBuckets.js"
import * as TestDatabase from "./support/TestDatabase.js"

/** Real time for the database to answer. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))

/** Two nodes' governors over one database. */
const twoNodes = Effect.map(UpstreamBuckets, (buckets) =>
  [
    UpstreamGovernor.makeDatabase(buckets),
    UpstreamGovernor.makeDatabase(buckets)
  ] as const)

/** When each take of `key` (alternating between the governors) got its token, on the TestClock. */
const takeTimes = (
  governors: ReadonlyArray<
    { readonly take: (key: string, policy: { requestsPerSecond: number }) => Effect.Effect<void> }
  >,
  key: string,
  n: number,
  requestsPerSecond: number
) =>
  Effect.fork(Effect.forEach(
    Array.from({ length: n }, (_, i) => governors[i % governors.length]!),
    (governor) => Effect.zipRight(governor.take(key, { requestsPerSecond }), Clock.currentTimeMillis),
    { concurrency: "unbounded" }
  ))

/** Moves the TestClock in steps until `fiber` is done. */
const drive = <X, E>(fiber: Fiber.Fiber<X, E>, millis: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1_000 && Option.isNone(yield* Fiber.poll(fiber)); i++) {
      yield* settle
      yield* TestClock.adjust(millis)
    }
    return yield* Fiber.join(fiber)
  })

describe("UpstreamGovernor on the database", () => {
  it.effect("two nodes share one bucket per key: takes from both are spaced at the rate", () =>
    Effect.gen(function*() {
      const [a, b] = yield* twoNodes
      const fiber = yield* takeTimes([a, b], "provider_x|f|LIC-1", 10, 5)
      const times = (yield* drive(fiber, 50)).slice().sort((x, y) => x - y)
      // 10 takes at 5 a second: one every 200 ms, none together, whichever node took it
      assert.strictEqual(times.length, 10)
      for (let i = 1; i < times.length; i++) assert.isAtLeast(times[i]! - times[i - 1]!, 200)
      assert.isAtMost(times[9]! - times[0]!, 1_800 + 50)
      // another key (another licence) has a bucket of its own
      const other = yield* takeTimes([a, b], "provider_x|f|LIC-2", 1, 5)
      const [t] = yield* drive(other, 50)
      assert.isAtMost(t! - (yield* TestClock.currentTimeMillis), 0)
    }).pipe(Effect.provide(TestDatabase.layer)))

  it.effect("a pause set on one node (a 429's Retry-After) holds the other node's takes until it ends", () =>
    Effect.gen(function*() {
      const [a, b] = yield* twoNodes
      const start = yield* TestClock.currentTimeMillis
      yield* a.pause("provider_x|f|LIC-3", "3 seconds")
      const fiber = yield* takeTimes([b], "provider_x|f|LIC-3", 1, 50)
      const [t] = yield* drive(fiber, 100)
      assert.isAtLeast(t! - start, 3_000)
      assert.isAtMost(t! - start, 3_100)
    }).pipe(Effect.provide(TestDatabase.layer)))

  it.effect("fails open: when the store fails, takes are paced in the process", () =>
    Effect.gen(function*() {
      const buckets = yield* UpstreamBuckets
      const broken = { ...buckets, reserve: () => Effect.die(new Error("database down")) }
      const governor = UpstreamGovernor.makeDatabase(broken)
      const fiber = yield* takeTimes([governor], "provider_x|f|LIC-4", 3, 10)
      const times = (yield* drive(fiber, 50)).slice().sort((x, y) => x - y)
      assert.deepStrictEqual(times.map((x) => x - times[0]!), [0, 100, 200])
    }).pipe(Effect.provide(Layer.merge(TestDatabase.layer, Logger.remove(Logger.defaultLogger)))))
})
