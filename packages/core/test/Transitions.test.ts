import { assert, describe, it } from "@effect/vitest"
import { Transitions } from "@tracebridge/core"
import { Effect, Exit } from "effect"

describe("Transitions", () => {
  it("moves connections as DECISIONS says", () => {
    const m = Transitions.connectionStatus
    assert.isTrue(Transitions.canTransition(m, "pending", "active"))
    assert.isTrue(Transitions.canTransition(m, "active", "error"))
    assert.isTrue(Transitions.canTransition(m, "error", "active"))
    for (const from of ["pending", "active", "error"] as const) {
      assert.isTrue(Transitions.canTransition(m, from, "inactive"))
    }
    assert.isFalse(Transitions.canTransition(m, "inactive", "active"))
    assert.isFalse(Transitions.canTransition(m, "active", "pending"))
    assert.deepStrictEqual(Transitions.next(m, "inactive"), [])
  })

  it("moves transfers pending → in_transit → received | rejected, and pending → rejected", () => {
    const m = Transitions.transferStatus
    assert.deepStrictEqual([...Transitions.next(m, "pending")].sort(), ["in_transit", "rejected"])
    assert.deepStrictEqual([...Transitions.next(m, "in_transit")].sort(), ["received", "rejected"])
    assert.deepStrictEqual(Transitions.next(m, "received"), [])
    assert.deepStrictEqual(Transitions.next(m, "rejected"), [])
    assert.isFalse(Transitions.canTransition(m, "pending", "received"))
  })

  it("moves plants clone → vegetative → flowering only", () => {
    const m = Transitions.growthPhase
    assert.isTrue(Transitions.canTransition(m, "clone", "vegetative"))
    assert.isTrue(Transitions.canTransition(m, "vegetative", "flowering"))
    assert.isFalse(Transitions.canTransition(m, "clone", "flowering"))
    assert.isFalse(Transitions.canTransition(m, "flowering", "vegetative"))
  })

  it("toggles holds and facility status both ways", () => {
    assert.isTrue(Transitions.canTransition(Transitions.packageHold, false, true))
    assert.isTrue(Transitions.canTransition(Transitions.packageHold, true, false))
    assert.isTrue(Transitions.canTransition(Transitions.facilityStatus, "inactive", "active"))
  })

  it("has no self-loops and only known states in any machine", () => {
    for (const m of Transitions.machines) {
      for (const [from, to] of m.edges as ReadonlyArray<readonly [unknown, unknown]>) {
        assert.notStrictEqual(from, to, m.name)
        assert.isTrue(
          (m.states as ReadonlyArray<unknown>).includes(from) && (m.states as ReadonlyArray<unknown>).includes(to)
        )
      }
    }
  })

  it.effect("fails an impossible move with InvalidStateTransition naming what is allowed", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* Transitions.transition(Transitions.transferStatus, "pending", "in_transit"),
        "in_transit"
      )
      const exit = yield* Effect.exit(Transitions.transition(Transitions.transferStatus, "pending", "received"))
      assert.isTrue(Exit.isFailure(exit))
      const error = yield* Effect.flip(Transitions.transition(Transitions.transferStatus, "pending", "received"))
      assert.strictEqual(error._tag, "InvalidStateTransition")
      assert.strictEqual(error.machine, "Transfer.status")
      assert.include(error.message, "allowed: in_transit, rejected")
      const final = yield* Effect.flip(Transitions.transition(Transitions.transferStatus, "received", "pending"))
      assert.include(final.message, "it is final")
    }))
})
