/**
 * The provider_b descriptor and credential schema: pure values, no upstream. Everything that talks
 * to BioTrack is tested against the sandbox's emulator, the one fake of provider_b
 * (`packages/sandbox/test/providers/provider-b/`: `Adapter.test.ts`, `Client.test.ts`).
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderB } from "@tracebridge/adapter-provider-b"
import { LabResult, ProviderDescriptor } from "@tracebridge/core"
import { Either, Schema } from "effect"

describe("ProviderB descriptor", () => {
  it("has a complete descriptor that hands over whole tables", () => {
    assert.deepStrictEqual(ProviderDescriptor.problems(ProviderB.descriptor), [])
    assert.isNull(ProviderB.descriptor.providerPageSize)
    assert.deepStrictEqual(ProviderDescriptor.states(ProviderB.descriptor), ["AR", "CT", "HI", "IL"])
    assert.deepStrictEqual(ProviderB.descriptor.writes, ["split_package", "record_lab_result", "create_transfer"])
  })

  it("offers no sales deliveries or patients anywhere, and derives items, strains and locations", () => {
    for (const state of ProviderDescriptor.states(ProviderB.descriptor)) {
      const c = ProviderB.descriptor.capabilities[state]!
      assert.isFalse(c.sales_deliveries)
      assert.isFalse(c.patients)
      assert.isTrue(c.items && c.strains && c.locations && c.harvests && c.labs && c.transfers)
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
  it("has one facts table: a valid time zone for exactly the served states, and QA panels in core's categories", () => {
    const served = ProviderDescriptor.states(ProviderB.descriptor)
    assert.deepStrictEqual(Object.keys(ProviderB.facts.timeZones).sort(), [...served])
    assert.strictEqual(ProviderB.descriptor.facts, ProviderB.facts)
    for (const state of served) {
      const timeZone = ProviderB.facts.timeZones[state]!
      assert.doesNotThrow(() => new Intl.DateTimeFormat("en-US", { timeZone }), `${state}: ${timeZone}`)
    }
    for (const panel of Object.values(ProviderB.facts.labPanels)) {
      assert.include(LabResult.categories, panel.category)
    }
    assert.deepStrictEqual(
      Object.values(ProviderB.facts.labPanels).filter((p) => !p.judged).map((p) => p.category).sort(),
      ["moisture", "potency"]
    )
  })
})

describe("ProviderB upstreamErrorCode", () => {
  const errorCodeOf = ProviderB.module.upstreamErrorCode!

  it("reads BioTrack's errorcode of a success: 0 answer sent with HTTP 200, as text", () => {
    assert.strictEqual(
      errorCodeOf({ status: 200, body: "{\"success\":0,\"error\":\"Your session has expired.\",\"errorcode\":63}" }),
      "63"
    )
    assert.strictEqual(errorCodeOf({ status: 200, body: "{\"success\":\"0\",\"errorcode\":\"602\"}" }), "602")
    // a header line leaked into the body, as BioTrack sometimes sends
    assert.strictEqual(
      errorCodeOf({ status: 200, body: "Content-Type: text/JSON\n{\"success\":0,\"errorcode\":62}" }),
      "62"
    )
  })

  it("has none for a success, a failure without a code, or a body that is not JSON", () => {
    assert.isUndefined(errorCodeOf({ status: 200, body: "{\"success\":1,\"sessionid\":\"s\"}" }))
    assert.isUndefined(errorCodeOf({ status: 200, body: "{\"success\":0,\"error\":\"no code\"}" }))
    assert.isUndefined(errorCodeOf({ status: 502, body: "<html>Bad gateway</html>" }))
  })
})
