/**
 * The provider_a adapter's writes against its one fake: what it refuses before sending anything
 * (a refused login, units that do not convert), Metrc's row-level refusals, and the units it
 * converts when it draws from a source package.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { useUpstream } from "../../support/Upstream.js"
import * as A from "./Support.js"

useUpstream()

describe("ProviderA writes", () => {
  it.effect("turns 400 row arrays into ProviderRejected carrying the provider's messages", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const source = cultivator.packages.find((p) => !p.is_on_hold && p.quantity >= 2)!
    return A.withPort((port) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(port.splitPackage(a.session(), cultivator.facility.id, {
          item_name: "No Such Item",
          item_category: "Flower",
          item_strain: null,
          quantity: 1,
          unit_of_measure: "Grams",
          source_package_ids: [source.id]
        }))
        assert.strictEqual(error._tag, "ProviderRejected")
        if (error._tag === "ProviderRejected") {
          assert.deepStrictEqual(error.messages, ["row 0: Item No Such Item does not exist"])
        }
        assert.strictEqual(a.upstream.log.filter((l) => l.startsWith("POST /packages/v2/")).length, 1)
      })
    )
  })

  it.effect("refuses a wrong user key with ProviderLoginRequired and a split with mixed units with InsufficientQuantity", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const source = cultivator.packages.find((p) => !p.is_on_hold && p.unit_of_measure === "Grams")!
    const item = cultivator.items.find((i) => i.unit_of_measure === "Grams")!
    return A.withPort((port) =>
      Effect.gen(function*() {
        const login = yield* Effect.flip(port.checkCredentials(a.session(A.bad.user_key)))
        assert.strictEqual(login._tag, "ProviderLoginRequired")
        // a package weighed in grams cannot make a count of units
        const mixed = yield* Effect.flip(port.splitPackage(a.session(), cultivator.facility.id, {
          item_name: item.name,
          item_category: item.category,
          item_strain: item.strain,
          quantity: 1,
          unit_of_measure: "Each",
          source_package_ids: [source.id]
        }))
        assert.strictEqual(mixed._tag, "InsufficientQuantity")
        assert.include(mixed.message, "cannot convert")
        assert.isFalse(a.upstream.log.some((l) => l.startsWith("POST")))
      })
    )
  })

  it.effect("converts units across sources when splitting", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const source = cultivator.packages.find((p) => !p.is_on_hold && p.unit_of_measure === "Grams" && p.quantity > 10)!
    const preRoll = cultivator.items.find((i) => i.category === "Pre-Roll")!
    return A.withPort((port) =>
      Effect.gen(function*() {
        const created = yield* port.splitPackage(a.session(), cultivator.facility.id, {
          item_name: preRoll.name,
          item_category: preRoll.category,
          item_strain: preRoll.strain,
          quantity: 0.25,
          unit_of_measure: "Ounces",
          source_package_ids: [source.id]
        })
        assert.strictEqual(created.quantity, 0.25)
        assert.strictEqual(created.unit_of_measure, "Ounces")
        const after = yield* port.get("packages", a.session(), cultivator.facility.id, source.id)
        // 0.25 oz in grams (the emulator keeps quantities to 4 decimals)
        assert.closeTo(after.quantity, source.quantity - 7.087381, 1e-4)
      })
    )
  })
})
