import { assert, describe, it } from "@effect/vitest"
import { Query } from "@tracebridge/core"
import { Either, Schema } from "effect"
import * as samples from "./support/samples.js"

const decode = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })

describe("Query", () => {
  it("reads package filters from a query string", () => {
    assert.deepStrictEqual(
      decode(Query.withPage(Query.Packages))({ is_on_hold: "true", tag: "ABC", per_page: "10" }),
      Either.right({ page: 1, per_page: 10, is_on_hold: true, tag: "ABC" })
    )
    assert.deepStrictEqual(decode(Query.Packages)({ is_on_hold: "false" }), Either.right({ is_on_hold: false }))
  })

  it("refuses bad filter values and unknown filters", () => {
    for (
      const [schema, input] of [
        [Query.Packages, { is_on_hold: "yes" }],
        [Query.Packages, { updated_since: "yesterday" }],
        [Query.Packages, { updated_since: "2026-01-01T00:00:00" }],
        [Query.Plants, { growth_phase: "seedling" }],
        [Query.Transfers, { direction: "sideways" }],
        [Query.Transfers, { status: "lost" }],
        [Query.Sales, { from: "2026-02-01T00:00:00Z", to: "2026-01-01T00:00:00Z" }],
        [Query.LabResults, { package_id: "" }],
        [Query.Harvests, { colour: "green" }]
      ] as const
    ) {
      assert.isTrue(Either.isLeft(decode(schema as Schema.Schema<any, any>)(input)), JSON.stringify(input))
    }
  })

  it("accepts every documented filter", () => {
    const since = { updated_since: "2026-01-01T00:00:00Z" }
    for (const schema of [Query.Harvests, Query.Items, Query.Strains, Query.Locations, Query.Patients]) {
      assert.isTrue(Either.isRight(decode(schema as Schema.Schema<any, any>)(since)))
    }
    assert.isTrue(Either.isRight(decode(Query.Transfers)({ ...since, status: "pending", direction: "incoming" })))
    assert.isTrue(
      Either.isRight(decode(Query.SalesDeliveries)({ from: "2026-01-01T00:00:00Z", to: "2026-01-01T00:00:00Z" }))
    )
    assert.isTrue(Either.isRight(decode(Query.LabResults)({ package_id: samples.pkg.id })))
  })

  it("applies filters to core objects", () => {
    assert.isTrue(Query.matchesPackage({ is_on_hold: false, tag: samples.pkg.tag })(samples.pkg))
    assert.isFalse(Query.matchesPackage({ is_on_hold: true })(samples.pkg))
    assert.isFalse(Query.matchesPackage({ lab_testing_state: "TestFailed" })(samples.pkg))
    assert.isTrue(Query.matchesPlant({ growth_phase: "flowering" })(samples.plant))
    assert.isFalse(Query.matchesPlant({ growth_phase: "clone" })(samples.plant))
    assert.isTrue(Query.matchesLabResult({ package_id: samples.pkg.id })(samples.labResult))
    assert.isFalse(Query.matchesTransfer({ status: "received" })(samples.transfer))
    assert.isTrue(Query.matchesSale({ from: "2026-03-01T00:00:00Z", to: "2026-03-02T00:00:00Z" })(samples.sale))
    assert.isFalse(Query.matchesSale({ from: "2026-03-01T18:00:00Z" })(samples.sale))
    assert.isTrue(Query.matchesSale({ to: "2026-03-01T10:35:45-07:00" })(samples.sale))
    assert.isFalse(Query.matchesSalesDelivery({ to: "2026-03-01T00:00:00Z" })(samples.salesDelivery))
    assert.isFalse(
      Query.matchesSalesDelivery({ from: "2026-03-01T00:00:00Z" })({ ...samples.salesDelivery, delivery_date: null })
    )
  })
})
