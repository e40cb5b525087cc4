import { assert, describe, it } from "@effect/vitest"
import { Commands, Ids, Units } from "@tracebridge/core"
import { Either, ParseResult, Schema } from "effect"

const decode = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })
const source = Ids.make("package", "provider_a", "1")

const split = {
  item_name: "Blue Dream Pre-Roll",
  item_category: "Pre-Roll",
  item_strain: "Blue Dream",
  quantity: 10,
  unit_of_measure: "Grams",
  source_package_ids: [source]
}

describe("Commands", () => {
  it("accepts a split and defaults an absent strain to null", () => {
    assert.deepStrictEqual(decode(Commands.SplitPackage)(split), Either.right(split))
    const { item_strain: _, ...noStrain } = split
    assert.deepStrictEqual(decode(Commands.SplitPackage)(noStrain), Either.right({ ...noStrain, item_strain: null }))
  })

  it("refuses splits that cannot be right", () => {
    for (
      const bad of [
        { ...split, quantity: 0 },
        { ...split, quantity: -1 },
        { ...split, quantity: "10" },
        { ...split, item_name: "   " },
        { ...split, item_name: "x".repeat(501) },
        { ...split, source_package_ids: [] },
        { ...split, source_package_ids: [source, source] },
        { ...split, tag: "unexpected" }
      ]
    ) {
      assert.isTrue(Either.isLeft(decode(Commands.SplitPackage)(bad)), JSON.stringify(bad).slice(0, 80))
    }
  })

  it("refuses a quantity below its unit's precision, zero, negative, non-finite or absurdly large, naming quantity", () => {
    const pathOf = (input: unknown) => {
      const decoded = decode(Commands.SplitPackage)(input)
      if (Either.isRight(decoded)) return undefined
      const issues = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
      return issues[0]?.path.join(".")
    }
    for (
      const quantity of [5e-324, 1e-7, 0, -0, -1, Number.POSITIVE_INFINITY, Number.NaN, 1e300, Units.MAX_QUANTITY * 2]
    ) {
      assert.strictEqual(pathOf({ ...split, quantity }), "quantity", String(quantity))
    }
    // a count is whole: half an Each is below its precision
    assert.strictEqual(pathOf({ ...split, quantity: 0.5, unit_of_measure: "Each" }), "quantity")
    assert.strictEqual(pathOf({ ...split, quantity: 2, unit_of_measure: "Each" }), undefined)
    assert.strictEqual(pathOf({ ...split, quantity: Units.precision("Grams") }), undefined)
    assert.strictEqual(pathOf({ ...split, quantity: Units.MAX_QUANTITY }), undefined)
    // the same rule on a transfer line
    const line = { package_id: source, tag: "TAG-1", item_name: "Buds", quantity: 5e-324, unit_of_measure: "Grams" }
    const transfer = { transfer_type: "Wholesale", shipper_facility: "A", recipient_facility: "B", packages: [line] }
    const refused = decode(Commands.CreateTransfer)(transfer)
    assert.isTrue(Either.isLeft(refused))
    if (Either.isLeft(refused)) {
      assert.strictEqual(
        ParseResult.ArrayFormatter.formatErrorSync(refused.left)[0]?.path.join("."),
        "packages.0.quantity"
      )
    }
  })

  it("accepts a lab result with defaults for the optional fields", () => {
    const input = {
      package_id: source,
      lab_name: "Test Labs",
      overall_passed: false,
      results: [{ name: "E. coli", category: "microbials", value: null, unit: null, passed: false, notes: null }]
    }
    assert.deepStrictEqual(
      decode(Commands.RecordLabResult)(input),
      Either.right({ ...input, lab_license: null, test_type: "ComplianceTesting", test_date: null })
    )
    assert.isTrue(Either.isLeft(decode(Commands.RecordLabResult)({ ...input, results: [] })))
    assert.isTrue(Either.isLeft(decode(Commands.RecordLabResult)({ ...input, results: [{ name: "THC" }] })))
  })

  it("accepts a transfer and refuses one without packages or with a repeated package", () => {
    const line = { package_id: source, tag: "TAG-1", item_name: "Buds", quantity: 5, unit_of_measure: "Grams" }
    const input = { transfer_type: "Wholesale", shipper_facility: "A", recipient_facility: "B", packages: [line] }
    const decoded = decode(Commands.CreateTransfer)(input)
    assert.isTrue(Either.isRight(decoded))
    if (Either.isRight(decoded)) assert.strictEqual(decoded.right.driver_name, null)
    assert.isTrue(Either.isLeft(decode(Commands.CreateTransfer)({ ...input, packages: [] })))
    assert.isTrue(Either.isLeft(decode(Commands.CreateTransfer)({ ...input, packages: [line, line] })))
    assert.isTrue(Either.isLeft(decode(Commands.CreateTransfer)({ ...input, estimated_arrival: "tomorrow" })))
  })
})
