/**
 * The ports by provider name: found by name, a missing provider named with the registered ones,
 * the same provider twice refused.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderPort, ProviderPorts } from "@tracebridge/core"
import { Effect } from "effect"
import * as Memory from "./support/MemoryDriver.js"

describe("ProviderPorts", () => {
  it.effect("resolves registered providers and names the missing ones", () =>
    Effect.gen(function*() {
      const ports = yield* ProviderPorts.ProviderPorts
      assert.deepStrictEqual(ports.providers, ["provider_a"])
      const port = yield* ports.get("provider_a")
      assert.strictEqual(port.descriptor.displayName, "Memory Provider")
      const missing = yield* Effect.flip(ports.get("provider_b"))
      assert.strictEqual(missing._tag, "ProviderNotRegistered")
      assert.include(missing.message, "registered: provider_a")
    }).pipe(Effect.provide(ProviderPorts.layer([ProviderPort.make(Memory.make())]))))

  it("refuses the same provider twice", () => {
    assert.throws(() => ProviderPorts.make([ProviderPort.make(Memory.make()), ProviderPort.make(Memory.make())]))
  })
})
