/**
 * The descriptor's validation of its facts: the time zones are given for exactly the served
 * states, so a state list and a time-zone table cannot drift apart unnoticed; and core's
 * lab-test vocabulary, which the adapters and emulators read instead of each other's. Also the
 * states, capabilities and base URLs read from the descriptor's data, and each flaw of a broken
 * descriptor named (`problems`).
 */
import { assert, describe, it } from "@effect/vitest"
import { LabResult, ProviderDescriptor } from "@tracebridge/core"
import { Effect } from "effect"
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

describe("ProviderDescriptor", () => {
  it.effect("reads states, capabilities and base URLs from the data", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(ProviderDescriptor.states(Memory.descriptor), ["CO", "MA"])
      const co = yield* ProviderDescriptor.capabilitiesFor(Memory.descriptor, "CO")
      assert.isFalse(co.sales_deliveries)
      assert.strictEqual(
        yield* ProviderDescriptor.baseUrl(Memory.descriptor, "CO", "sandbox"),
        "http://memory.invalid/sandbox"
      )
      assert.strictEqual(
        yield* ProviderDescriptor.baseUrl(Memory.descriptor, "CO", "production", "http://127.0.0.1:4010"),
        "http://127.0.0.1:4010"
      )
      const error = yield* Effect.flip(ProviderDescriptor.baseUrl(Memory.descriptor, "TX", "production"))
      assert.strictEqual(error._tag, "UnsupportedState")
    }))
})

describe("ProviderDescriptor.problems", () => {
  it("finds nothing wrong with a complete descriptor and names each flaw of a broken one", () => {
    assert.deepStrictEqual(ProviderDescriptor.problems(Memory.descriptor), [])
    const broken = ProviderDescriptor.problems({
      ...Memory.descriptor,
      baseUrls: {
        CO: { sandbox: "not a url", production: "https://ok.example" },
        TX: { sandbox: "https://a", production: "https://b" }
      },
      credentialFields: [{ name: "api_key", label: "API key", secret: true }],
      providerPageSize: 0
    })
    assert.include(broken, "CO sandbox base URL is not an http(s) URL")
    assert.include(broken, "MA has capabilities but no base URLs")
    assert.include(broken, "TX has base URLs but no capabilities")
    assert.include(broken, "credential schema reads [user_key] but the form declares [api_key]")
    assert.include(broken, "providerPageSize must be a positive whole number or null")
  })
})
