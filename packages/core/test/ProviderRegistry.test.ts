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
      assert.strictEqual(yield* ProviderDescriptor.baseUrl(Memory.descriptor, "CO", "sandbox"), "http://memory.invalid/sandbox")
      assert.strictEqual(yield* ProviderDescriptor.baseUrl(Memory.descriptor, "CO", "production", "http://127.0.0.1:4010"), "http://127.0.0.1:4010")
      const error = yield* Effect.flip(ProviderDescriptor.baseUrl(Memory.descriptor, "TX", "production"))
      assert.strictEqual(error._tag, "UnsupportedState")
    }))
})
