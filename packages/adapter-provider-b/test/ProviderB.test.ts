import { assert, describe, it } from "@effect/vitest"
import { ProviderB } from "@tracebridge/adapter-provider-b"
import { ProviderDescriptor } from "@tracebridge/core"
import { Either, Schema } from "effect"

describe("ProviderB", () => {
  it("has a complete descriptor that hands over whole tables", () => {
    assert.deepStrictEqual(ProviderDescriptor.problems(ProviderB.descriptor), [])
    assert.isNull(ProviderB.descriptor.providerPageSize)
    assert.deepStrictEqual(ProviderDescriptor.states(ProviderB.descriptor), ["AR", "CT", "HI", "IL"])
  })

  it("offers no sales deliveries anywhere", () => {
    for (const state of ProviderDescriptor.states(ProviderB.descriptor)) {
      assert.isFalse(ProviderB.descriptor.capabilities[state]!.sales_deliveries)
    }
  })

  it("asks for UBI, username and password", () => {
    const decode = Schema.decodeUnknownEither(ProviderB.Credentials, { onExcessProperty: "error" })
    assert.isTrue(Either.isRight(decode({ ubi: "123456789", username: "user@example.com", password: "pw" })))
    assert.isTrue(Either.isLeft(decode({ ubi: "12345", username: "u", password: "p" })))
    assert.isTrue(Either.isLeft(decode({ ubi: "123456789", username: "u" })))
    assert.deepStrictEqual(ProviderB.descriptor.credentialFields.map((f) => f.name), ["ubi", "username", "password"])
    assert.isTrue(ProviderB.descriptor.credentialFields.find((f) => f.name === "password")!.secret)
  })
})
