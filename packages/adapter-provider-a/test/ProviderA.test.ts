/**
 * The provider_a descriptor. Everything the port does over HTTP (the conformance kit, paging,
 * windows, retries, writes) is tested against the provider's one fake, the sandbox emulator, in
 * `packages/sandbox/test/providers/provider-a/` (this package cannot depend on the sandbox).
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderA } from "@tracebridge/adapter-provider-a"
import { ProviderDescriptor } from "@tracebridge/core"

describe("ProviderA descriptor", () => {
  it("is complete, pages by 20 and declares the three writes", () => {
    assert.deepStrictEqual(ProviderDescriptor.problems(ProviderA.descriptor), [])
    assert.strictEqual(ProviderA.descriptor.providerPageSize, 20)
    assert.deepStrictEqual(ProviderA.descriptor.writes, ["split_package", "record_lab_result", "create_transfer"])
  })

  it("addresses each state on its own api-{st} and sandbox-api-{st} host", () => {
    for (const state of ProviderA.states) {
      const st = state.toLowerCase()
      assert.deepStrictEqual(ProviderA.descriptor.baseUrls[state], {
        production: `https://api-${st}.metrc.com`,
        sandbox: `https://sandbox-api-${st}.metrc.com`
      })
    }
    assert.isTrue(ProviderA.descriptor.capabilities.CA!.sales_deliveries)
    assert.isFalse(ProviderA.descriptor.capabilities.OH!.sales_deliveries)
  })
  it("has one facts table: a valid time zone for exactly the served states, read by the descriptor's check", () => {
    const served = ProviderDescriptor.states(ProviderA.descriptor)
    assert.deepStrictEqual(Object.keys(ProviderA.facts.timeZones).sort(), [...served])
    assert.deepStrictEqual([...ProviderA.states].sort(), [...served])
    assert.strictEqual(ProviderA.descriptor.facts, ProviderA.facts)
    for (const state of served) {
      const timeZone = ProviderA.facts.timeZones[state]!
      assert.doesNotThrow(() => new Intl.DateTimeFormat("en-US", { timeZone }), `${state}: ${timeZone}`)
    }
  })
})
