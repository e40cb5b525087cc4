/**
 * `persistence/internal/Permit.ts`: a take that gives up after its wait never loses a permit,
 * whatever lands at the same moment (the wait's end, a give-back, an interruption).
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Scope } from "effect"
import * as Permit from "../src/persistence/internal/Permit.js"

/** Holds the permit in a scope of its own until `release` closes it. */
const hold = (permit: Permit.Permit) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    assert.isTrue(yield* Scope.extend(permit.take(0), scope))
    return { release: Scope.close(scope, Exit.void) }
  })

describe("Permit", () => {
  it.live("takes at once when free, gives back when the scope closes, and waits first come first served", () =>
    Effect.gen(function*() {
      const permit = Permit.make(1)
      const first = yield* hold(permit)
      assert.strictEqual(permit.free(), 0)
      const order: Array<string> = []
      const a = yield* Effect.fork(Effect.scoped(Effect.tap(permit.take("1 second"), () => order.push("a"))))
      yield* Effect.sleep(Duration.millis(5))
      const b = yield* Effect.fork(Effect.scoped(Effect.tap(permit.take("1 second"), () => order.push("b"))))
      yield* Effect.sleep(Duration.millis(5))
      assert.strictEqual(permit.waiting(), 2)
      yield* first.release
      assert.isTrue(yield* Fiber.join(a))
      assert.isTrue(yield* Fiber.join(b))
      assert.deepStrictEqual(order, ["a", "b"])
      assert.strictEqual(permit.free(), 1)
      assert.strictEqual(permit.waiting(), 0)
    }))

  it.live("a wait that ends first answers false and holds nothing", () =>
    Effect.gen(function*() {
      const permit = Permit.make(1)
      const first = yield* hold(permit)
      const started = Date.now()
      assert.isFalse(yield* Effect.scoped(permit.take("30 millis")))
      assert.isAtLeast(Date.now() - started, 25)
      assert.strictEqual(permit.waiting(), 0)
      yield* first.release
      assert.strictEqual(permit.free(), 1)
    }))

  it.live("the wait's end and the give-back due at the same moment, in either order: the permit is had or left free", () =>
    Effect.gen(function*() {
      for (const releaseFirst of [false, true, false, true]) {
        const permit = Permit.make(1)
        const first = yield* hold(permit)
        // Node runs timers due at the same moment in the order they were set: both orders are tried
        const startWaiter = Effect.fork(
          Effect.scoped(Effect.tap(permit.take("20 millis"), () => Effect.sleep("1 millis")))
        )
        if (releaseFirst) setTimeout(() => Effect.runFork(first.release), 20)
        const waiter = yield* startWaiter
        if (!releaseFirst) setTimeout(() => Effect.runFork(first.release), 20)
        // the loop is held past both: they run in one timers phase
        const end = performance.now() + 40
        while (performance.now() < end) {
          // busy
        }
        yield* Fiber.join(waiter)
        yield* Effect.sleep(Duration.millis(30))
        assert.strictEqual(permit.free(), 1, `release first: ${releaseFirst}`)
        assert.strictEqual(permit.waiting(), 0)
      }
    }))

  it.live("a take interrupted after its grant gives the permit on: nothing is lost", () =>
    Effect.gen(function*() {
      const permit = Permit.make(1)
      const first = yield* hold(permit)
      const waiter = yield* Effect.fork(Effect.scoped(Effect.zipRight(permit.take("1 second"), Effect.never)))
      const next = yield* Effect.fork(Effect.scoped(permit.take("1 second")))
      yield* Effect.sleep(Duration.millis(5))
      yield* first.release
      yield* Fiber.interrupt(waiter)
      assert.isTrue(yield* Fiber.join(next))
      assert.strictEqual(permit.free(), 1)
    }))

  it.live("a take interrupted while it waits leaves the queue", () =>
    Effect.gen(function*() {
      const permit = Permit.make(1)
      const first = yield* hold(permit)
      const waiter = yield* Effect.fork(Effect.scoped(permit.take("1 second")))
      yield* Effect.sleep(Duration.millis(5))
      assert.strictEqual(permit.waiting(), 1)
      yield* Fiber.interrupt(waiter)
      assert.strictEqual(permit.waiting(), 0)
      yield* first.release
      assert.strictEqual(permit.free(), 1)
    }))

  it.live("many takes racing their waits against give-backs: every permit is back at the end", () =>
    Effect.gen(function*() {
      const permit = Permit.make(2)
      const fibers = []
      for (let i = 0; i < 200; i++) {
        fibers.push(
          yield* Effect.fork(Effect.scoped(Effect.flatMap(
            permit.take(Duration.millis(i % 7)),
            (had) => (had ? Effect.sleep(Duration.millis(i % 3)) : Effect.void)
          )))
        )
        if (i % 10 === 0) yield* Effect.sleep(Duration.millis(1))
      }
      for (const f of fibers) yield* Fiber.join(f)
      assert.strictEqual(permit.free(), 2)
      assert.strictEqual(permit.waiting(), 0)
    }))
})
