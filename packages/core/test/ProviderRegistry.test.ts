import { assert, describe, it } from "@effect/vitest"
import { ProviderDescriptor, ProviderPort, ProviderRegistry } from "@tracebridge/core"
import { Effect } from "effect"
import * as Memory from "./support/MemoryDriver.js"

describe("ProviderRegistry", () => {
  it.effect("resolves registered providers and names the missing ones", () =>
    Effect.gen(function*() {
      const registry = yield* ProviderRegistry.ProviderRegistry
      assert.deepStrictEqual(registry.providers, ["provider_a"])
      const port = yield* registry.get("provider_a")
      assert.strictEqual(port.descriptor.displayName, "Memory Provider")
      const missing = yield* Effect.flip(registry.get("provider_b"))
      assert.strictEqual(missing._tag, "ProviderNotRegistered")
      assert.include(missing.message, "registered: provider_a")
    }).pipe(Effect.provide(ProviderRegistry.layer([ProviderPort.make(Memory.make())]))))

  it("refuses the same provider twice", () => {
    assert.throws(() => ProviderRegistry.make([ProviderPort.make(Memory.make()), ProviderPort.make(Memory.make())]))
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
