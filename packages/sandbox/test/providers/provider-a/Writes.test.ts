/**
 * The provider_a adapter's writes against its one fake: what it refuses before sending anything
 * (a refused login, units that do not convert), Metrc's row-level refusals, and the units it
 * converts when it draws from a source package.
 *
 * Issue #19: a transfer's parties by `fac_…` id, licence number or exact name (resolved by the
 * port, so Metrc gets licence numbers), and its lines: a Metrc template lists `PackageLabel`s
 * only, so a package ships whole; a line of part of a package is refused at
 * `packages.N.quantity` (split first) rather than recorded as the whole package.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Commands, Package } from "@tracebridge/core"
import { Licensees } from "@tracebridge/sandbox"
import { Effect } from "effect"
import { useUpstream } from "../../support/Upstream.js"
import * as A from "./Support.js"

useUpstream()

/** A transfer of whole packages (or of `quantity` of each) from the facility. */
const transferOf = (
  shipper: string,
  recipient: string,
  packages: ReadonlyArray<Package.Package>,
  quantity?: number
): Commands.CreateTransfer => ({
  transfer_type: "Transfer",
  shipper_facility: shipper,
  recipient_facility: recipient,
  packages: packages.map((p) => ({
    package_id: p.id,
    tag: p.tag,
    item_name: p.item_name,
    quantity: quantity ?? p.quantity,
    unit_of_measure: p.unit_of_measure
  })),
  estimated_departure: null,
  estimated_arrival: null,
  transporter: null,
  driver_name: null,
  vehicle_info: null
})

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

  it.effect("takes the parties by fac_ id, licence number or exact name, and sends Metrc licence numbers", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const retail = a.facility("retail")
    const shipped = cultivator.packages.filter((p) => !p.is_on_hold && p.quantity > 0).slice(0, 3)
    return A.withPort((port) =>
      Effect.gen(function*() {
        const at = cultivator.facility
        const forms: ReadonlyArray<readonly [string, string]> = [
          [at.id, retail.facility.name],
          [at.name, retail.facility.id],
          [at.license_number, retail.facility.license_number]
        ]
        for (const [i, [shipper, recipient]] of forms.entries()) {
          const created = yield* port.createTransfer(a.session(), at.id, transferOf(shipper, recipient, [shipped[i]!]))
          assert.strictEqual(created.shipper_facility, at.license_number)
          assert.strictEqual(created.recipient_facility, retail.facility.license_number)
          assert.deepStrictEqual(created.packages.map((l) => [l.tag, l.quantity]), [[
            shipped[i]!.tag,
            shipped[i]!.quantity
          ]])
        }
        const bodies = a.upstream.bodies as Array<any>
        assert.deepStrictEqual(
          bodies.map((b) => b[0].Destinations[0].RecipientLicenseNumber),
          [retail.facility.license_number, retail.facility.license_number, retail.facility.license_number]
        )
      })
    )
  })

  it.effect("refuses an unknown party with InvalidInput at its field, sending nothing", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const pkg = cultivator.packages.find((p) => !p.is_on_hold && p.quantity > 0)!
    return A.withPort((port) =>
      Effect.gen(function*() {
        const at = cultivator.facility
        for (
          const [shipper, recipient, field] of [
            ["fac_bm8tc3VjaA", at.license_number, "shipper_facility"],
            [at.id, "Nobody's Dispensary", "recipient_facility"],
            [a.facility("retail").facility.name, at.license_number, "shipper_facility"]
          ] as const
        ) {
          const error = yield* Effect.flip(
            port.createTransfer(a.session(), at.id, transferOf(shipper, recipient, [pkg]))
          )
          assert.strictEqual(error._tag, "InvalidInput", error.message)
          if (error._tag === "InvalidInput") assert.strictEqual(error.path, field)
        }
        assert.isFalse(a.upstream.log.some((l) => l.startsWith("POST")))
      })
    )
  })

  it.effect("refuses a line of part of a package at packages.N.quantity (split first), and more than it holds", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const [whole, part] = cultivator.packages.filter((p) => !p.is_on_hold && p.quantity >= 2)
    return A.withPort((port) =>
      Effect.gen(function*() {
        const at = cultivator.facility
        const command = transferOf(at.license_number, Licensees.of(a.world)[0]!.license_number, [whole!, part!])
        const partial = yield* Effect.flip(port.createTransfer(a.session(), at.id, {
          ...command,
          packages: [command.packages[0]!, { ...command.packages[1]!, quantity: 1 }]
        }))
        assert.strictEqual(partial._tag, "InvalidInput")
        if (partial._tag === "InvalidInput") {
          assert.strictEqual(partial.path, "packages.1.quantity")
          assert.include(partial.message, "whole packages")
          assert.include(partial.message, "split")
        }
        const more = yield* Effect.flip(port.createTransfer(a.session(), at.id, {
          ...command,
          packages: [{ ...command.packages[0]!, quantity: whole!.quantity + 1 }]
        }))
        assert.strictEqual(more._tag, "InsufficientQuantity")
        assert.isFalse(a.upstream.log.some((l) => l.startsWith("POST")), "nothing was sent")
        // all of each package, as the template records it
        const created = yield* port.createTransfer(a.session(), at.id, command)
        assert.deepStrictEqual(
          created.packages.map((l) => [l.package_id, l.quantity, l.unit_of_measure]),
          [whole!, part!].map((p) => [p.id, p.quantity, p.unit_of_measure])
        )
      })
    )
  })
})
