import { assert, describe, it } from "@effect/vitest"
import { Capabilities, ProviderModule, ProviderName } from "@tracebridge/core"
import type { ProviderDescriptor } from "@tracebridge/core"
import { Effect, Schema } from "effect"

const descriptor = (overrides: Partial<ProviderDescriptor.ProviderDescriptor> = {}) =>
  ({
    name: "provider_z",
    displayName: "Zed",
    credentialFields: [
      { name: "account", label: "Account", secret: false },
      { name: "token", label: "Token", secret: true }
    ],
    loginKey: ["account"],
    licenseTypes: ["Retail"],
    credentials: Schema.Struct({ account: Schema.String, token: Schema.String }),
    baseUrls: { CO: { sandbox: "https://sandbox.zed.test", production: "https://zed.test" } },
    providerPageSize: 50,
    rateLimit: { requestsPerSecond: 5, concurrency: 2, retryAfterHeader: true },
    capabilities: { CO: Capabilities.make(true) },
    writes: ["split_package", "record_lab_result"],
    writeNeeds: { record_lab_result: "labs" },
    ...overrides
  }) as ProviderDescriptor.ProviderDescriptor

const module = (d: ProviderDescriptor.ProviderDescriptor) => ({ descriptor: d })

describe("ProviderName", () => {
  it("is an open, validated string: provider_ and lower-case letters, digits or _", () => {
    for (const good of ["provider_a", "provider_b", "provider_c", "provider_nm2", "provider_bio_track"]) {
      assert.isTrue(ProviderName.isProviderName(good), good)
    }
    for (const bad of ["", "provider_", "Provider_a", "provider-a", "metrc", "provider_A", "provider_a;drop", 42]) {
      assert.isFalse(ProviderName.isProviderName(bad), String(bad))
    }
    assert.strictEqual(ProviderName.folderOf("provider_c"), "adapter-provider-c")
  })
})

describe("ProviderModule", () => {
  it("a sound list has no problems; a duplicate, a bad name, a loginKey outside the form and a state without licence types are named", () => {
    assert.deepStrictEqual(ProviderModule.problems([module(descriptor())]), [])
    assert.deepStrictEqual(ProviderModule.problems([]), ["no provider is registered"])
    const found = ProviderModule.problems([
      module(descriptor()),
      module(descriptor()),
      module(descriptor({ name: "Zed", loginKey: ["user"], licenseTypes: { CO: [] } }))
    ])
    assert.include(found, "provider_z is registered twice")
    assert.isTrue(found.some((p) => p.startsWith("Zed: Zed is not a provider name")), found.join("\n"))
    assert.include(found, "Zed: loginKey names user, which is not a credential field")
    assert.include(found, "Zed: CO has no licence types")
  })

  it("summary: states with licence types, capabilities and environments, the login fields, and the writes with the facility capability each needs", () =>
    Effect.gen(function*() {
      const summary = ProviderModule.summary(descriptor())
      const encoded = yield* Schema.encode(ProviderModule.Summary)(summary)
      assert.deepStrictEqual(encoded, {
        name: "provider_z",
        display_name: "Zed",
        states: [{
          state: "CO",
          license_types: ["Retail"],
          capabilities: Capabilities.make(true),
          environments: ["sandbox", "production"]
        }],
        login_fields: [
          { name: "account", label: "Account", secret: false },
          { name: "token", label: "Token", secret: true }
        ],
        writes: [
          { name: "split_package", facility_capability: null },
          { name: "record_lab_result", facility_capability: "labs" }
        ]
      })
    }).pipe(Effect.runSync))
})
