import { assert, describe, it } from "@effect/vitest"
import type { Scenario } from "@tracebridge/sandbox"
import { Sandbox } from "@tracebridge/sandbox"
import { Either } from "effect"

const REFERENCE = "2026-03-15T12:00:00.000Z"
const NOW = Date.parse(REFERENCE) + 3_600_000

describe("Sandbox.version", () => {
  it("changes on every accepted change, restore and reset, and only then", () => {
    const sandbox = new Sandbox.Sandbox({ seed: "42", referenceDate: REFERENCE, now: () => NOW })
    const world = sandbox.world("provider_a", "CO", "user_good")
    const other = sandbox.world("provider_a", "CO", "user_other")
    const key = Sandbox.keyOf("provider_a", "CO", "user_good")
    const otherKey = Sandbox.keyOf("provider_a", "CO", "user_other")
    const run = (name: string, params: unknown = {}) =>
      sandbox.apply<Scenario.Outcome, Scenario.Failure>(world, {
        _tag: "Scenario",
        input: { name, params, at: NOW }
      })
    const seen = new Set([sandbox.version(key)])
    const expectNew = () => {
      const v = sandbox.version(key)
      assert.isFalse(seen.has(v), `version ${v} was seen before`)
      seen.add(v)
    }
    assert.strictEqual(sandbox.version(key), sandbox.version(key))

    assert.isTrue(Either.isRight(run("lab_result_received")))
    expectNew()
    const before = sandbox.version(key)
    assert.isTrue(Either.isLeft(run("no_such_scenario")))
    assert.strictEqual(sandbox.version(key), before, "a refused change changes nothing")

    const otherBefore = sandbox.version(otherKey)
    sandbox.restore(world, [])
    expectNew()
    assert.strictEqual(sandbox.version(otherKey), otherBefore, "another world keeps its version")

    sandbox.reset(key)
    expectNew()
    sandbox.world("provider_a", "CO", "user_good")
    sandbox.reset()
    expectNew()
    assert.notStrictEqual(sandbox.version(otherKey), otherBefore, "a full reset changes every world's version")
    void other
  })
})
