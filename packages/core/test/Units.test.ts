import { assert, describe, it } from "@effect/vitest"
import { Units } from "@tracebridge/core"
import { Option } from "effect"

describe("Units", () => {
  it("reads names and abbreviations case-insensitively", () => {
    assert.deepStrictEqual(Units.canonical("g"), Option.some("Grams"))
    assert.deepStrictEqual(Units.canonical("OUNCES"), Option.some("Ounces"))
    assert.deepStrictEqual(Units.canonical(" each "), Option.some("Each"))
    assert.isTrue(Option.isNone(Units.canonical("furlongs")))
    assert.deepStrictEqual(Units.kindOf("lb"), Option.some("weight"))
  })

  it("converts within a kind and refuses across kinds", () => {
    assert.deepStrictEqual(Units.convert(1, "Ounces", "Grams"), Option.some(28.349523))
    assert.deepStrictEqual(Units.convert(1, "Pounds", "Ounces"), Option.some(16))
    assert.deepStrictEqual(Units.convert(2500, "mg", "Grams"), Option.some(2.5))
    assert.deepStrictEqual(Units.convert(3, "Each", "ea"), Option.some(3))
    assert.isTrue(Option.isNone(Units.convert(1, "Grams", "Each")))
    assert.isTrue(Option.isNone(Units.convert(1, "Grams", "Milliliters")))
    assert.isTrue(Option.isNone(Units.convert(1, "Grams", "bushels")))
  })
})
