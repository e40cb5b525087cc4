import { assert, describe, it } from "@effect/vitest"
import { Seed } from "@tracebridge/sandbox"
import { Effect } from "effect"

const draw = (seed: string, kind: string, index: number, n = 5) =>
  Effect.gen(function*() {
    const random = Seed.stream(seed, kind, index)
    const out: Array<number> = []
    for (let i = 0; i < n; i++) out.push(yield* random.nextIntBetween(0, 1_000_000))
    return out
  })

describe("Seed", () => {
  it.effect("gives the same stream for the same seed, kind and index", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* draw("42", "package", 7), yield* draw("42", "package", 7))
    }))

  it.effect("gives independent streams per seed, kind and index", () =>
    Effect.gen(function*() {
      const base = yield* draw("42", "package", 7)
      assert.notDeepEqual(yield* draw("43", "package", 7), base)
      assert.notDeepEqual(yield* draw("42", "plant", 7), base)
      assert.notDeepEqual(yield* draw("42", "package", 8), base)
    }))

  it("derives stable integer seeds", () => {
    assert.strictEqual(Seed.integer("42", "package", 7), Seed.integer("42", "package", 7))
    assert.notStrictEqual(Seed.integer("42", "package", 7), Seed.integer("42", "package", 8))
    assert.strictEqual(Seed.integer("", "", 0), 381_601_311)
  })
})
