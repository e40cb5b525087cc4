import { assert, describe, it } from "@effect/vitest"
import { Generate, Registry, Writes } from "@tracebridge/sandbox"
import { Either } from "effect"

const world = () =>
  Generate.generate({
    provider: "provider_a",
    state: "CO",
    seed: "7",
    login: "user_good",
    referenceDate: "2026-03-15T12:00:00.000Z",
    ...Registry.seedingOf("provider_a")
  })
const dump = (w: ReturnType<typeof world>) => JSON.stringify(w, (_, v) => (v instanceof Map ? [...v.entries()] : v))

describe("Writes", () => {
  it("splits a package, drawing from the source in its unit", () => {
    const w = world()
    const data = w.facilities[0]!
    const source = data.packages.find((p) => !p.is_on_hold && p.quantity > 10)!
    const created = Either.getOrThrow(Writes.splitPackage(w, {
      license: data.facility.license_number,
      itemName: data.items[0]!.name,
      quantity: 1,
      unit: "Ounces",
      ingredients: [{ tag: source.tag, quantity: 1, unit: "Ounces" }],
      at: Date.parse("2026-03-15T13:00:00Z")
    }))
    assert.deepStrictEqual(created.source_package_ids, [source.id])
    assert.closeTo(data.packages.find((p) => p.id === source.id)!.quantity, source.quantity - 28.349523, 1e-4)
  })

  it("refuses splits beyond the source, from a package on hold, or in units that do not convert, changing nothing", () => {
    const w = world()
    const data = w.facilities[0]!
    const source = data.packages.find((p) => !p.is_on_hold)!
    const held = data.packages.find((p) => p.is_on_hold)!
    const before = dump(w)
    const attempt = (tag: string, quantity: number, unit: string) =>
      Writes.splitPackage(w, {
        license: data.facility.license_number,
        itemName: data.items[0]!.name,
        quantity: 1,
        unit: "Grams",
        ingredients: [{ tag, quantity, unit }],
        at: 0
      })
    const over = attempt(source.tag, source.quantity + 1, source.unit_of_measure)
    const onHold = attempt(held.tag, 1, held.unit_of_measure)
    const units = attempt(source.tag, 1, "Each")
    const missing = attempt("NO-SUCH-TAG", 1, "Grams")
    assert.deepStrictEqual(
      [over, onHold, units, missing].map((r) => (Either.isLeft(r) ? r.left.reason : "accepted")),
      ["insufficient_quantity", "on_hold", "units", "package_not_found"]
    )
    assert.strictEqual(dump(w), before)
  })

  it("records a lab result and creates a pending transfer", () => {
    const w = world()
    const data = w.facilities[0]!
    const pkg = data.packages[10]!
    const result = Either.getOrThrow(Writes.recordLabResult(w, {
      license: data.facility.license_number,
      tag: pkg.tag,
      results: [{ name: "THC", value: 20, passed: true, notes: null }],
      testDate: "2026-03-15",
      at: 0
    }))
    assert.strictEqual(result.package_id, pkg.id)
    assert.strictEqual(data.packages[10]!.lab_testing_state, "TestPassed")
    const transfer = Either.getOrThrow(Writes.createTransfer(w, {
      license: data.facility.license_number,
      recipient: w.facilities[3]!.facility.license_number,
      transferType: "Transfer",
      tags: [pkg.tag],
      estimatedDeparture: "2026-03-16T09:00:00Z",
      estimatedArrival: null,
      driverName: null,
      vehicleInfo: null,
      transporter: null,
      template: true,
      at: 0
    }))
    assert.strictEqual(transfer.status, "pending")
    assert.strictEqual(transfer.estimated_departure, "2026-03-16T09:00:00.000Z")
    assert.match(transfer.provider_transfer_id, /^template-\d+$/)
  })

  it("a package goes on one transfer at a time: a second one while the first is on its way is refused (issue #30)", () => {
    const w = world()
    const data = w.facilities[0]!
    const busy = new Set(
      w.transfers.filter((t) => t.transfer.status === "pending" || t.transfer.status === "in_transit")
        .flatMap((t) => t.transfer.packages.map((p) => p.tag))
    )
    const pkg = data.packages.find((p) => !p.is_on_hold && !busy.has(p.tag))!
    const send = (recipient: string) =>
      Writes.createTransfer(w, {
        license: data.facility.license_number,
        recipient,
        transferType: "Transfer",
        tags: [pkg.tag],
        estimatedDeparture: null,
        estimatedArrival: null,
        driverName: null,
        vehicleInfo: null,
        transporter: null,
        template: false,
        at: 0
      })
    const before = w.transfers.length
    assert.isTrue(Either.isRight(send(w.facilities[2]!.facility.license_number)))
    const again = send(w.facilities[3]!.facility.license_number)
    assert.isTrue(Either.isLeft(again))
    if (Either.isLeft(again)) {
      assert.strictEqual(again.left.reason, "on_transfer")
      assert.include(again.left.message, pkg.tag)
    }
    assert.strictEqual(w.transfers.length, before + 1, "the refused transfer was not kept")
  })
})
