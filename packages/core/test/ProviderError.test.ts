import { assert, describe, it } from "@effect/vitest"
import { ProviderError } from "@tracebridge/core"
import { Effect, Schema } from "effect"

describe("ProviderError", () => {
  it.effect("names the offending field of a provider payload", () =>
    Effect.gen(function*() {
      const Wire = Schema.Struct({ Data: Schema.Array(Schema.Struct({ Id: Schema.Number, Quantity: Schema.Number })) })
      const error = yield* Effect.flip(
        Schema.decodeUnknown(Wire)({ Data: [{ Id: 1, Quantity: 2 }, { Id: 2, Quantity: "x" }] })
      )
      const mapped = ProviderError.ProviderInvalidResponse.fromParseError({
        provider: "provider_a",
        operation: "packages.list",
        error
      })
      assert.strictEqual(mapped.path, "Data.1.Quantity")
      assert.include(mapped.message, "invalid Data.1.Quantity")
    }))

  it("lists every member of the family and recognises them", () => {
    assert.deepStrictEqual([...ProviderError.tags].sort(), [
      "CapabilityNotEnabled",
      "InsufficientQuantity",
      "InvalidInput",
      "InvalidStateTransition",
      "PackageInTransfer",
      "ProviderInvalidResponse",
      "ProviderLoginRequired",
      "ProviderPermissionDenied",
      "ProviderRateLimited",
      "ProviderRejected",
      "ProviderTimeout",
      "ProviderUnavailable",
      "ResourceNotFound",
      "SandboxOnly",
      "UnsupportedState"
    ])
    assert.isTrue(ProviderError.isProviderError(ProviderError.ResourceNotFound.of("package", "x")))
    assert.isFalse(ProviderError.isProviderError(new Error("x")))
    assert.isFalse(ProviderError.isProviderError({ _tag: "Other" }))
  })

  it("says whose side failed", () => {
    const p = { provider: "provider_a" as const, operation: "x", message: "m" }
    assert.strictEqual(ProviderError.side(new ProviderError.ProviderTimeout(p)), "provider")
    assert.strictEqual(ProviderError.side(new ProviderError.ProviderRateLimited(p)), "provider")
    assert.strictEqual(
      ProviderError.side(new ProviderError.ProviderLoginRequired({ ...p, reason: "account_locked" })),
      "end_user"
    )
    assert.strictEqual(ProviderError.side(ProviderError.ResourceNotFound.of("package", "x")), "client")
    assert.strictEqual(ProviderError.side(new ProviderError.SandboxOnly({ operation: "x", message: "m" })), "client")
  })

  it("round-trips through its schema, so errors can cross process boundaries", () => {
    const error = new ProviderError.ProviderRejected({
      ...{ provider: "provider_b" as const, operation: "w", message: "m" },
      code: "602",
      messages: ["bad"]
    })
    const encoded = Schema.encodeSync(ProviderError.ProviderError)(error)
    const decoded = Schema.decodeSync(ProviderError.ProviderError)(encoded)
    assert.strictEqual(decoded._tag, "ProviderRejected")
    if (decoded._tag === "ProviderRejected") assert.deepStrictEqual(decoded.messages, ["bad"])
    assert.strictEqual(ProviderError.ResourceNotFound.of("lab_result", "abc").message, "No lab result with id abc")
  })
})
