import { assert, describe, it } from "@effect/vitest"
import { ChainOfCustody, Ids } from "@tracebridge/core"
import { Either } from "effect"
import * as samples from "./support/samples.js"

const id = <K extends Ids.Kind>(kind: K, n: string) => Ids.make(kind, "provider_a", n)

// plant → harvest → root package → split → split-of-split, with noise around it
const plants = [
  { ...samples.plant, id: id("plant", "p2"), provider_plant_id: "p2", planted_date: "2025-10-02" },
  { ...samples.plant, id: id("plant", "p1"), provider_plant_id: "p1", planted_date: "2025-10-01" },
  { ...samples.plant, id: id("plant", "p9"), provider_plant_id: "p9" }
]
const harvest = {
  ...samples.harvest,
  id: id("harvest", "h1"),
  source_plant_ids: [id("plant", "p1"), id("plant", "p2")]
}
const otherHarvest = { ...samples.harvest, id: id("harvest", "h9"), source_plant_ids: [id("plant", "p9")] }
const root = {
  ...samples.pkg,
  id: id("package", "root"),
  source_harvest_ids: [harvest.id],
  source_package_ids: [],
  lab_results: []
}
const child = { ...root, id: id("package", "child"), source_harvest_ids: [], source_package_ids: [root.id] }
const grandchild = { ...root, id: id("package", "grandchild"), source_harvest_ids: [], source_package_ids: [child.id] }
const unrelated = { ...root, id: id("package", "other"), source_harvest_ids: [otherHarvest.id] }
const lab = (n: string, pkg: string, date: string) => ({
  ...samples.labResult,
  id: id("lab_result", n),
  package_id: id("package", pkg),
  test_date: date
})
const transferOf = (n: string, pkg: string, date: string) => ({
  ...samples.transfer,
  id: id("transfer", n),
  actual_departure: date,
  packages: [{ ...samples.transfer.packages[0]!, package_id: id("package", pkg) }]
})
const saleOf = (n: string, pkg: string, date: string) => ({
  ...samples.sale,
  id: id("sale", n),
  sale_date: date,
  items: [{ ...samples.sale.items[0]!, package_id: id("package", pkg) }]
})

const pool: ChainOfCustody.Pool = {
  packages: [grandchild, unrelated, child, root],
  plants,
  harvests: [otherHarvest, harvest],
  lab_results: [lab("l2", "child", "2026-02-02"), lab("l1", "root", "2026-02-01"), lab("l9", "other", "2026-01-01")],
  transfers: [
    transferOf("t2", "grandchild", "2026-02-20T00:00:00Z"),
    transferOf("t1", "child", "2026-02-10T00:00:00Z"),
    transferOf("t9", "other", "2026-02-01T00:00:00Z")
  ],
  sales: [saleOf("s1", "grandchild", "2026-03-01T00:00:00Z"), saleOf("s2", "child", "2026-03-02T00:00:00Z")]
}

describe("ChainOfCustody", () => {
  it("assembles plants, harvests, sources, the package, lab results, transfers and sales in reading order", () => {
    const chain = Either.getOrThrow(ChainOfCustody.assemble(grandchild.id, pool))
    assert.deepStrictEqual(Object.keys(chain), [
      "plants",
      "harvests",
      "source_packages",
      "package",
      "lab_results",
      "transfers",
      "sales"
    ])
    assert.deepStrictEqual(chain.plants.map((p) => p.provider_plant_id), ["p1", "p2"])
    assert.deepStrictEqual(chain.harvests.map((h) => h.id), [harvest.id])
    assert.deepStrictEqual(chain.source_packages.map((p) => p.id), [root.id, child.id])
    assert.strictEqual(chain.package.id, grandchild.id)
    assert.deepStrictEqual(chain.lab_results.map((r) => r.id), [id("lab_result", "l1"), id("lab_result", "l2")])
    assert.deepStrictEqual(chain.transfers.map((t) => t.id), [id("transfer", "t1"), id("transfer", "t2")])
    assert.deepStrictEqual(chain.sales.map((s) => s.id), [id("sale", "s1")])
  })

  it("includes lab results embedded in the packages, once", () => {
    const embedded = lab("l1", "root", "2026-02-01")
    const chain = Either.getOrThrow(
      ChainOfCustody.assemble(child.id, { ...pool, packages: [{ ...root, lab_results: [embedded] }, child] })
    )
    assert.deepStrictEqual(chain.lab_results.map((r) => r.id), [id("lab_result", "l1"), id("lab_result", "l2")])
  })

  it("survives cycles and missing sources", () => {
    const a = { ...root, id: id("package", "a"), source_package_ids: [id("package", "b"), id("package", "missing")] }
    const b = { ...root, id: id("package", "b"), source_package_ids: [id("package", "a")] }
    const chain = Either.getOrThrow(ChainOfCustody.assemble(a.id, { ...pool, packages: [a, b] }))
    assert.deepStrictEqual(chain.source_packages.map((p) => p.id), [b.id])
  })

  it("fails with ResourceNotFound for a package not in the pool", () => {
    const result = ChainOfCustody.assemble(id("package", "nope"), pool)
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) assert.strictEqual(result.left._tag, "ResourceNotFound")
  })
})
