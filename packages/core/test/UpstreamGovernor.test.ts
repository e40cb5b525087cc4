import { assert, describe, it } from "@effect/vitest"
import { UpstreamGovernor } from "@tracebridge/core"
import { Clock, Effect, Fiber, Option, Redacted, TestClock } from "effect"

/** Takes `n` tokens of `key` at once; answers the Clock time at which each was handed out. */
const burst = (governor: UpstreamGovernor.Service, key: string, n: number, requestsPerSecond: number) =>
  Effect.fork(
    Effect.forEach(
      Array.from({ length: n }, (_, i) => i),
      () => Effect.zipRight(governor.take(key, { requestsPerSecond }), Clock.currentTimeMillis),
      { concurrency: "unbounded" }
    )
  )

describe("UpstreamGovernor (in memory)", () => {
  it.effect("spaces takes of one key at requestsPerSecond: never more than that in one second", () =>
    Effect.gen(function*() {
      const governor = yield* UpstreamGovernor.makeMemory
      const fiber = yield* burst(governor, "provider_a|v|LIC-1", 10, 5)
      yield* TestClock.adjust("10 millis")
      assert.isNull(fiber.unsafePoll(), "10 takes at 5/s wait")
      yield* TestClock.adjust("2 seconds")
      const times = (yield* Fiber.join(fiber)).slice().sort((a, b) => a - b)
      assert.deepStrictEqual(times, [0, 200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800])
    }))

  it.effect("refills at requestsPerSecond: an idle key hands out its next token at once", () =>
    Effect.gen(function*() {
      const governor = yield* UpstreamGovernor.makeMemory
      yield* governor.take("k", { requestsPerSecond: 2 })
      yield* TestClock.adjust("500 millis")
      const fiber = yield* burst(governor, "k", 1, 2)
      yield* TestClock.adjust("0 millis")
      assert.deepStrictEqual(yield* Fiber.join(fiber), [500])
    }))

  it.effect("a bucket of `burst` tokens lets that many go at once, then spaces the rest", () =>
    Effect.gen(function*() {
      const governor = yield* UpstreamGovernor.makeMemory
      const fiber = yield* Effect.fork(
        Effect.forEach(
          [1, 2, 3, 4],
          () => Effect.zipRight(governor.take("k", { requestsPerSecond: 2, burst: 2 }), Clock.currentTimeMillis),
          { concurrency: "unbounded" }
        )
      )
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual((yield* Fiber.join(fiber)).slice().sort((a, b) => a - b), [0, 0, 500, 1000])
    }))

  it.effect("keys are separate buckets", () =>
    Effect.gen(function*() {
      const governor = yield* UpstreamGovernor.makeMemory
      const a = yield* burst(governor, "provider_a|v|LIC-1", 3, 1)
      const b = yield* burst(governor, "provider_a|v|LIC-2", 3, 1)
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual((yield* Fiber.join(a)).slice().sort((x, y) => x - y), [0, 1000, 2000])
      assert.deepStrictEqual((yield* Fiber.join(b)).slice().sort((x, y) => x - y), [0, 1000, 2000])
    }))

  it.effect("a 429 told without Retry-After pauses nothing; with one, it pauses the key for that long", () =>
    Effect.gen(function*() {
      const governor = yield* UpstreamGovernor.makeMemory
      yield* governor.take("k", { requestsPerSecond: 50 })
      yield* governor.throttled("k", Option.none())
      const free = yield* burst(governor, "k", 1, 50)
      yield* TestClock.adjust("20 millis")
      assert.deepStrictEqual(yield* Fiber.join(free), [20], "the next token as the rate allows")
      yield* governor.throttled("k", Option.some("2 seconds"))
      const held = yield* burst(governor, "k", 1, 50)
      yield* TestClock.adjust("3 seconds")
      assert.deepStrictEqual(yield* Fiber.join(held), [2020])
    }))

  it.effect("a pause (Retry-After) holds the key's next token until it ends, and only that key's", () =>
    Effect.gen(function*() {
      const governor = yield* UpstreamGovernor.makeMemory
      yield* governor.take("k", { requestsPerSecond: 50 })
      yield* governor.pause("k", "3 seconds")
      const paused = yield* burst(governor, "k", 2, 50)
      const other = yield* burst(governor, "other", 1, 50)
      yield* TestClock.adjust("2999 millis")
      assert.deepStrictEqual(yield* Fiber.join(other), [0])
      assert.isNull(paused.unsafePoll(), "still paused just before Retry-After ends")
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual((yield* Fiber.join(paused)).slice().sort((x, y) => x - y), [3000, 3020])
      // a shorter pause never cuts one in force
      yield* governor.pause("k", "10 seconds")
      yield* governor.pause("k", "1 second")
      const later = yield* burst(governor, "k", 1, 50)
      yield* TestClock.adjust("20 seconds")
      assert.deepStrictEqual(yield* Fiber.join(later), [3999 + 10_000])
    }))

  it.effect("keys name the provider, a fingerprint of the vendor key (never the key) and the licence", () =>
    Effect.gen(function*() {
      const secret = "vendor-key-0123456789"
      const fingerprint = yield* UpstreamGovernor.fingerprint(Redacted.make(secret))
      assert.match(fingerprint, /^[0-9a-f]{32}$/)
      assert.strictEqual(fingerprint, yield* UpstreamGovernor.fingerprint(Redacted.make(secret)))
      assert.notStrictEqual(fingerprint, yield* UpstreamGovernor.fingerprint(Redacted.make("another")))
      const key = UpstreamGovernor.key({ provider: "provider_a", vendorKeyFingerprint: fingerprint, licence: "L-1" })
      assert.strictEqual(key, `provider_a|${fingerprint}|L-1`)
      assert.notInclude(key, secret)
    }))
  it.live("takes that wake late together (a busy event loop) do not go out together: each takes a new turn", () =>
    Effect.gen(function*() {
      const governor = yield* UpstreamGovernor.makeMemory
      // 20 a second: turns 50 ms apart; four takes reserve the turns 0, 50, 100 and 150 ms from now
      const fiber = yield* burst(governor, "provider_a|v|LIC-LATE", 4, 20)
      yield* Effect.sleep("5 millis")
      // the event loop is busy for 300 ms: every turn but the first passes while it is
      const until = Date.now() + 300
      while (Date.now() < until) { /* busy */ }
      const times = (yield* Fiber.join(fiber)).slice().sort((a, b) => a - b)
      for (let i = 2; i < times.length; i++) {
        assert.isAtLeast(times[i]! - times[i - 1]!, 40, `late takes spaced out: ${JSON.stringify(times)}`)
      }
    }))
})

/** One caller's way through the governor, as an adapter goes: admitted, then the key's token. */
const call = (governor: UpstreamGovernor.Service, key: string, policy: UpstreamGovernor.Policy) =>
  Effect.zipRight(
    Effect.zipRight(governor.admit(key, policy), governor.take(key, policy)),
    Clock.currentTimeMillis
  )

describe("UpstreamGovernor priority: background callers (the sync) leave room for interactive ones", () => {
  it.effect("an interactive call behind 50 queued background calls waits about one spacing, not behind them all", () =>
    Effect.gen(function*() {
      const governor = yield* UpstreamGovernor.makeMemory
      const policy = { requestsPerSecond: 10 }
      const backlog = yield* Effect.fork(
        Effect.forEach(Array.from({ length: 50 }), () => call(governor, "k", policy), { concurrency: "unbounded" })
          .pipe(UpstreamGovernor.background)
      )
      yield* TestClock.adjust("1 second")
      const interactive = yield* Effect.fork(call(governor, "k", policy))
      yield* TestClock.adjust("300 millis")
      const done = interactive.unsafePoll()
      assert.isNotNull(done, "the interactive call went within 300 ms (behind all 50 it would wait about 4 s)")
      yield* TestClock.adjust("10 seconds")
      const times = (yield* Fiber.join(backlog)).slice().sort((a, b) => a - b)
      // the background calls run at the background share of the rate, never above the key's rate
      assert.strictEqual(times.length, 50)
      for (let i = 1; i < times.length; i++) assert.isAtLeast(times[i]! - times[i - 1]!, 100)
      assert.isAtMost(times.at(-1)!, Math.ceil(49 * 1000 / (10 * UpstreamGovernor.BACKGROUND_SHARE)) + 200)
    }))

  it.effect("an interactive caller is admitted at once; a background one is paced at the background share", () =>
    Effect.gen(function*() {
      const governor = yield* UpstreamGovernor.makeMemory
      const admitted = (n: number) =>
        Effect.forEach(
          Array.from({ length: n }),
          () => Effect.zipRight(governor.admit("k", { requestsPerSecond: 10 }), Clock.currentTimeMillis),
          { concurrency: "unbounded" }
        )
      const interactive = yield* Effect.fork(admitted(5))
      const background = yield* Effect.fork(UpstreamGovernor.background(admitted(3)))
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* Fiber.join(interactive), [0, 0, 0, 0, 0])
      const spacing = 1000 / (10 * UpstreamGovernor.BACKGROUND_SHARE)
      assert.deepStrictEqual((yield* Fiber.join(background)).slice().sort((a, b) => a - b), [0, spacing, 2 * spacing])
    }))

  it.effect("a background caller is told so; an interactive one is the default", () =>
    Effect.gen(function*() {
      assert.isFalse(yield* UpstreamGovernor.isBackground)
      assert.isTrue(yield* UpstreamGovernor.background(UpstreamGovernor.isBackground))
    }))
})
