/**
 * The descriptor's validation of its facts: the time zones are given for exactly the served
 * states, so a state list and a time-zone table cannot drift apart unnoticed; and core's
 * lab-test vocabulary, which the adapters and emulators read instead of each other's.
 */
import { assert, describe, it } from "@effect/vitest"
import { LabResult, ProviderDescriptor } from "@tracebridge/core"
import * as Memory from "./support/MemoryDriver.js"

describe("ProviderDescriptor facts", () => {
  it("accepts time zones for exactly the served states", () => {
    const d = { ...Memory.descriptor, facts: { timeZones: { CO: "America/Denver", MA: "America/New_York" } } }
    assert.deepStrictEqual(ProviderDescriptor.problems(d), [])
  })

  it("names a served state without a time zone, and a time zone for a state not served", () => {
    const d = { ...Memory.descriptor, facts: { timeZones: { AK: "America/Anchorage", CO: "America/Denver" } } }
    assert.deepStrictEqual(ProviderDescriptor.problems(d), [
      "MA is served but its facts give no time zone",
      "the facts give a time zone for AK, which is not served"
    ])
  })
})

describe("LabResult.classifyTest", () => {
  it("gives a core category and unit from a test's name, a unit in parentheses winning", () => {
    assert.deepStrictEqual(LabResult.classifyTest("THC"), { category: "potency", unit: "%" })
    assert.deepStrictEqual(LabResult.classifyTest("Pesticides"), { category: "pesticides", unit: "ppm" })
    assert.deepStrictEqual(LabResult.classifyTest("Total Yeast and Mold (CFU/g)"), {
      category: "microbials",
      unit: "CFU/g"
    })
    assert.deepStrictEqual(LabResult.classifyTest("Lead (ppb)"), { category: "heavy_metals", unit: "ppb" })
    assert.deepStrictEqual(LabResult.classifyTest("Visual inspection"), { category: "other", unit: null })
    for (const name of ["THC", "Myrcene", "Moisture", "Aflatoxin B1", "Butane", "Stems"]) {
      assert.include(LabResult.categories, LabResult.classifyTest(name).category)
    }
  })
})
