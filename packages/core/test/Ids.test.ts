import { assert, describe, it } from "@effect/vitest"
import { Ids } from "@tracebridge/core"
import { FastCheck, Option } from "effect"

const kinds = Object.keys(Ids.prefixes) as Array<Ids.Kind>

describe("Ids", () => {
  it("derives the same id from the same provider object, and different ids otherwise", () => {
    const a = Ids.make("package", "provider_a", "56789")
    assert.strictEqual(a, Ids.make("package", "provider_a", "56789"))
    assert.match(a, /^pkg_[A-Za-z0-9_-]+$/)
    assert.notStrictEqual(a, Ids.make("package", "provider_b", "56789"))
    assert.notStrictEqual<string>(a, Ids.make("plant", "provider_a", "56789"))
    assert.notStrictEqual(a, Ids.make("package", "provider_a", "56788"))
  })

  it.prop("decodes every id back to its kind, provider and provider id", [
    FastCheck.constantFrom(...kinds),
    FastCheck.constantFrom("provider_a" as const, "provider_b" as const),
    FastCheck.string({ minLength: 1, maxLength: 60, unit: "grapheme" })
  ], ([kind, provider, providerId]) => {
    const id = Ids.make(kind, provider, providerId)
    assert.deepStrictEqual(Ids.decode(id), Option.some({ kind, provider, providerId }))
    assert.deepStrictEqual(Ids.decodeAs(kind, provider, id), Option.some(providerId))
  })

  it("refuses ids of another kind or provider", () => {
    const id = Ids.make("package", "provider_a", "1")
    assert.isTrue(Option.isNone(Ids.decodeAs("plant", "provider_a", id)))
    assert.isTrue(Option.isNone(Ids.decodeAs("package", "provider_b", id)))
  })

  it("refuses garbage, forged and non-canonical ids", () => {
    // provider names are an open set, but a malformed one is never decoded
    const forged = `pkg_${btoa("Provider-Z:1").replace(/=+$/, "")}`
    const padded = `${Ids.make("package", "provider_a", "1")}==`
    for (
      const bad of ["", "pkg_", "pkg", "nope_abc", "pkg_!!!", "pkg_cHJvdmlkZXJfYQ", forged, padded, "x".repeat(500)]
    ) {
      assert.isTrue(Option.isNone(Ids.decode(bad)), bad)
    }
  })

  it.prop("never throws on arbitrary input", [FastCheck.string()], ([s]) => {
    const decoded = Ids.decode(s)
    if (Option.isSome(decoded)) {
      assert.strictEqual(Ids.make(decoded.value.kind, decoded.value.provider, decoded.value.providerId), s)
    }
  })
})
