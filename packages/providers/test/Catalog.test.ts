/**
 * The provider catalog: every installed module is sound and found under its descriptor's name; a
 * list that is not sound, or an unknown name, fails with the reason.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderModule } from "@tracebridge/core"
import { Catalog } from "@tracebridge/providers"

describe("Catalog", () => {
  it("lists sound modules, each under its descriptor's name", () => {
    assert.deepStrictEqual(ProviderModule.problems(Catalog.modules), [])
    assert.isAtLeast(Catalog.installed.names.length, 2)
    for (const name of Catalog.installed.names) assert.strictEqual(Catalog.get(name).descriptor.name, name)
    assert.deepStrictEqual(Catalog.secretConfig, Catalog.modules.flatMap((m) => m.secretConfig))
    // provider_a's production port needs the integrator's vendor key; provider_b's none
    assert.deepStrictEqual(Catalog.vendorKeyConfig, [{ provider: "provider_a", config: "PROVIDER_A_VENDOR_KEY" }])
    for (const { config } of Catalog.vendorKeyConfig) assert.include(Catalog.secretConfig, config)
  })

  it("an unsound list or an unknown name fails with a clear error", () => {
    const first = Catalog.modules[0]!
    assert.throws(() => Catalog.make([first, first]), /registered twice/)
    assert.throws(() => Catalog.make([]), /no provider is registered/)
    assert.throws(() => Catalog.get("provider_nope"), /provider_nope is not an installed provider; installed: /)
    assert.isUndefined(Catalog.installed.get("provider_nope"))
  })
})
