import { assert, describe, it } from "@effect/vitest"
import { ProviderA } from "@tracebridge/adapter-provider-a"
import { ProviderDescriptor } from "@tracebridge/core"
import { Either, Schema } from "effect"

describe("ProviderA", () => {
  it("has a complete descriptor", () => {
    assert.deepStrictEqual(ProviderDescriptor.problems(ProviderA.descriptor), [])
    assert.strictEqual(ProviderA.descriptor.providerPageSize, 20)
  })

  it("addresses each state on its own api-{st} and sandbox-api-{st} host", () => {
    for (const state of ProviderA.states) {
      const st = state.toLowerCase()
      assert.deepStrictEqual(ProviderA.descriptor.baseUrls[state], {
        production: `https://api-${st}.metrc.com`,
        sandbox: `https://sandbox-api-${st}.metrc.com`
      })
    }
  })

  it("serves sales deliveries only where deliveries exist", () => {
    assert.isTrue(ProviderA.descriptor.capabilities.CA!.sales_deliveries)
    assert.isFalse(ProviderA.descriptor.capabilities.OH!.sales_deliveries)
  })

  it("asks the user for a user API key only", () => {
    const decode = Schema.decodeUnknownEither(ProviderA.Credentials, { onExcessProperty: "error" })
    assert.isTrue(Either.isRight(decode({ user_key: "abcdefgh12345678" })))
    assert.isTrue(Either.isLeft(decode({ user_key: "short" })))
    assert.isTrue(Either.isLeft(decode({ user_key: "abcdefgh12345678", vendor_key: "x" })))
  })
})
