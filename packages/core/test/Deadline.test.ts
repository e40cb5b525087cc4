import { assert, describe, it } from "@effect/vitest"
import { Deadline, ProviderError } from "@tracebridge/core"
import { Duration, Effect, Fiber, FiberRef, Option, TestClock } from "effect"

const timeout = () =>
  new ProviderError.ProviderTimeout({ provider: "provider_a", operation: "test", message: "too late" })

describe("Deadline", () => {
  it.effect("there is none unless set; remaining counts down on the Clock and never goes below zero", () =>
    Effect.gen(function*() {
      assert.isTrue(Option.isNone(yield* Deadline.remaining))
      assert.deepStrictEqual(yield* Deadline.clamp("30 seconds"), Duration.seconds(30))
      yield* Effect.gen(function*() {
        assert.deepStrictEqual(yield* Deadline.remaining, Option.some(Duration.seconds(10)))
        yield* TestClock.adjust("4 seconds")
        assert.deepStrictEqual(yield* Deadline.remaining, Option.some(Duration.seconds(6)))
        assert.deepStrictEqual(yield* Deadline.clamp("30 seconds"), Duration.seconds(6))
        assert.deepStrictEqual(yield* Deadline.clamp("2 seconds"), Duration.seconds(2))
        yield* TestClock.adjust("20 seconds")
        assert.deepStrictEqual(yield* Deadline.remaining, Option.some(Duration.zero))
        assert.deepStrictEqual(yield* Deadline.clamp("30 seconds"), Duration.zero)
      }).pipe(Deadline.withBudget("10 seconds"))
      assert.isTrue(Option.isNone(yield* Deadline.remaining))
    }))

  it.effect("a nested budget never extends the deadline in force", () =>
    Effect.gen(function*() {
      const inner = yield* Deadline.remaining.pipe(
        Deadline.withBudget("1 minute"),
        Deadline.withBudget("5 seconds")
      )
      assert.deepStrictEqual(inner, Option.some(Duration.seconds(5)))
      const shorter = yield* Deadline.remaining.pipe(
        Deadline.withBudget("2 seconds"),
        Deadline.withBudget("5 seconds")
      )
      assert.deepStrictEqual(shorter, Option.some(Duration.seconds(2)))
    }))

  it.effect("within cuts the effect at the deadline with onTimeout, and lets a quick one through", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(
        Effect.flip(Deadline.within(Effect.never, { budget: "30 seconds", onTimeout: timeout }))
      )
      yield* TestClock.adjust("29 seconds")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "ProviderTimeout")
      const quick = yield* Deadline.within(Effect.succeed(1), { budget: "30 seconds", onTimeout: timeout })
      assert.strictEqual(quick, 1)
    }))

  it.effect("within inside an earlier deadline stops at the earlier one", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(
        Effect.flip(Deadline.within(Effect.never, { budget: "30 seconds", onTimeout: timeout })).pipe(
          Deadline.withBudget("3 seconds")
        )
      )
      yield* TestClock.adjust("3 seconds")
      assert.isTrue(Option.isSome(yield* Fiber.poll(fiber)))
    }))

  it.effect("cut stops a call only under a hard stop (enforce): a budget alone informs, it does not cut", () =>
    Effect.gen(function*() {
      const informed = yield* Effect.fork(
        Effect.never.pipe(Deadline.cut(timeout), Effect.flip, Deadline.withBudget("5 seconds"))
      )
      yield* TestClock.adjust("1 minute")
      assert.isTrue(Option.isNone(yield* Fiber.poll(informed)), "a budget alone cuts nothing")
      yield* Fiber.interrupt(informed)

      // under a hard stop, each call cut with the time left: the second starts 4 s in, stops at 10 s
      const stopped = yield* Effect.fork(
        Effect.gen(function*() {
          yield* Effect.sleep("4 seconds").pipe(Deadline.cut(timeout))
          return yield* Effect.flip(Effect.never.pipe(Deadline.cut(timeout)))
        }).pipe(Deadline.enforce("10 seconds"))
      )
      yield* TestClock.adjust("9 seconds")
      assert.isTrue(Option.isNone(yield* Fiber.poll(stopped)))
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* Fiber.join(stopped))._tag, "ProviderTimeout")

      // and outside one, nothing is raced
      assert.strictEqual(yield* Effect.succeed(2).pipe(Deadline.cut(timeout)), 2)
      assert.isFalse(yield* FiberRef.get(Deadline.enforced))
    }))
})
