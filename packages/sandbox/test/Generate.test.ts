import { assert, describe, it } from "@effect/vitest"
import { ChainOfCustody, Resource } from "@tracebridge/core"
import { Generate, Registry, World } from "@tracebridge/sandbox"
import { Either } from "effect"
import { createHash } from "node:crypto"

const REFERENCE = "2026-03-15T12:00:00.000Z"
const options = {
  provider: "provider_a" as const,
  state: "CO" as const,
  seed: "42",
  login: "user_good",
  referenceDate: REFERENCE,
  ...Registry.seedingOf("provider_a")
}

const hash = (world: World.World) =>
  createHash("sha256").update(JSON.stringify(world, (_, v) => (v instanceof Map ? [...v.entries()] : v))).digest("hex")

describe("Generate", () => {
  it("dates no change after the reference date, so a window up to now sees every object", () => {
    for (const provider of ["provider_a", "provider_b"] as const) {
      const world = Generate.generate({
        ...options,
        provider,
        state: provider === "provider_a" ? "CO" : "HI",
        ...Registry.seedingOf(provider)
      })
      const late = [...world.modified.entries()].filter(([, at]) => at > Date.parse(REFERENCE))
      assert.deepStrictEqual(late, [], provider)
    }
  })

  it("gives a facility none of a resource its licence cannot have (the sync reads none there: Resource.facilityTag)", () => {
    const held: Record<string, (d: World.FacilityData) => ReadonlyArray<unknown>> = {
      plants: (d) => d.plants,
      harvests: (d) => d.harvests,
      sales: (d) => d.sales,
      sales_deliveries: (d) => d.salesDeliveries,
      patients: (d) => d.patients
    }
    let checked = 0
    for (const provider of ["provider_a", "provider_b"] as const) {
      for (const seed of ["42", "7"]) {
        const world = Generate.generate({
          ...options,
          provider,
          seed,
          state: provider === "provider_a" ? "CO" : "HI",
          ...Registry.seedingOf(provider)
        })
        for (const d of world.facilities) {
          for (const name of Resource.names) {
            const definition = Resource.resources[name]
            const tag = "facilityTag" in definition ? definition.facilityTag : undefined
            if (tag === undefined || d.facility.capabilities.includes(tag)) continue
            assert.deepStrictEqual(held[name]!(d), [], `${provider} ${d.role} ${name}`)
            checked++
          }
        }
      }
    }
    assert.isAbove(checked, 0)
  })

  it("gives a byte-identical world for the same seed, login and reference date", () => {
    const a = hash(Generate.generate(options))
    assert.strictEqual(a, hash(Generate.generate(options)))
    assert.notStrictEqual(a, hash(Generate.generate({ ...options, login: "user_good_2" })))
    assert.notStrictEqual(a, hash(Generate.generate({ ...options, seed: "43" })))
    assert.notStrictEqual(
      a,
      hash(Generate.generate({ ...options, provider: "provider_b", state: "HI", ...Registry.seedingOf("provider_b") }))
    )
  })

  it("pins the default world's hash (a change to generation must be deliberate)", () => {
    // 2de9…: the world gained `holds` (empty when generated: every seeded hold is administrative);
    // without it the world still hashes to the earlier pin 5baea0dc008b361e (issue #29)
    assert.strictEqual(hash(Generate.generate(options)).slice(0, 16), "2de9ff4ea51d456e")
  })

  it("derives randomness per entity: more packages shift no plant, harvest, strain or item", () => {
    const small = Generate.generate(options)
    const bigger = Generate.generate({ ...options, size: { packages: 80 } })
    for (const [i, data] of small.facilities.entries()) {
      const other = bigger.facilities[i]!
      assert.deepStrictEqual(other.plants, data.plants)
      assert.deepStrictEqual(other.harvests, data.harvests)
      assert.deepStrictEqual(other.strains, data.strains)
      assert.deepStrictEqual(other.items, data.items)
      assert.deepStrictEqual(other.facility, data.facility)
    }
    assert.isAbove(bigger.facilities[0]!.packages.length, small.facilities[0]!.packages.length)
  })

  it("builds a cultivator, manufacturer, lab and dispensaries with every kind of record", () => {
    const world = Generate.generate(options)
    assert.deepStrictEqual(world.facilities.map((d) => d.role), [
      "cultivation",
      "manufacturing",
      "testing",
      "retail",
      "medical"
    ])
    const all = <K extends keyof World.FacilityData>(k: K) =>
      world.facilities.flatMap((d) => d[k] as unknown as Array<unknown>)
    for (
      const kind of [
        "packages",
        "plants",
        "harvests",
        "labResults",
        "sales",
        "salesDeliveries",
        "items",
        "strains",
        "locations",
        "patients"
      ] as const
    ) {
      assert.isAbove(all(kind).length, 1, kind)
    }
    const phases = new Set(world.facilities.flatMap((d) => d.plants.map((p) => p.growth_phase)))
    assert.deepStrictEqual([...phases].sort(), ["flowering", "vegetative"])
    const statuses = new Set(world.transfers.map((t) => t.transfer.status))
    assert.deepStrictEqual([...statuses].sort(), ["in_transit", "pending", "received", "rejected"])
    const results = world.facilities.flatMap((d) => d.labResults)
    assert.isTrue(results.some((r) => r.overall_passed) && results.some((r) => !r.overall_passed))
    const categories = new Set(results.flatMap((r) => r.results.map((t) => t.category)))
    for (const c of ["potency", "moisture", "microbials", "pesticides", "heavy_metals"]) {
      assert.isTrue(categories.has(c), c)
    }
    assert.isTrue(world.transfers.every((t) => t.transfer.manifest_number !== "" && t.transfer.driver_name !== null))
  })

  it("keeps the chain of custody: every package traces to a harvest and its plants, every sale and transfer line to a package", () => {
    for (const provider of ["provider_a", "provider_b"] as const) {
      const world = Generate.generate({
        ...options,
        provider,
        state: provider === "provider_a" ? "CO" : "HI",
        ...Registry.seedingOf(provider)
      })
      const pool: ChainOfCustody.Pool = {
        packages: world.facilities.flatMap((d) => d.packages.map((p) => World.packageView(d, p))),
        plants: world.facilities.flatMap((d) => d.plants),
        harvests: world.facilities.flatMap((d) => d.harvests),
        lab_results: world.facilities.flatMap((d) => d.labResults),
        transfers: world.transfers.map((t) => ({ ...t.transfer, facility_id: world.facilities[0]!.facility.id })),
        sales: world.facilities.flatMap((d) => d.sales)
      }
      const ids = new Set(pool.packages.map((p) => p.id as string))
      for (const pkg of pool.packages) {
        const chain = Either.getOrThrow(ChainOfCustody.assemble(pkg.id, pool))
        assert.isAbove(chain.harvests.length, 0, `${pkg.tag} traces to no harvest`)
        assert.isAbove(chain.plants.length, 0, `${pkg.tag} traces to no plant`)
        for (const source of pkg.source_package_ids) assert.isTrue(ids.has(source), `${pkg.tag} names a missing source`)
      }
      for (const sale of pool.sales) {
        for (const item of sale.items) assert.isTrue(ids.has(item.package_id), `sale ${sale.id}`)
      }
      for (const t of world.transfers) {
        for (const line of t.transfer.packages) assert.isTrue(ids.has(line.package_id), `transfer ${t.transfer.id}`)
      }
    }
  })

  it("makes quantities add up: what a package held, less what it holds, is what was drawn and sold from it", () => {
    const world = Generate.generate(options)
    const packages = world.facilities.flatMap((d) => d.packages)
    const sold = new Map<string, number>()
    for (const sale of world.facilities.flatMap((d) => d.sales)) {
      for (const item of sale.items) sold.set(item.package_id, (sold.get(item.package_id) ?? 0) + item.quantity)
    }
    for (const pkg of packages) {
      const drawn = world.draws.filter((d) => d.source === pkg.id).reduce((sum, d) => sum + d.quantity, 0)
      assert.closeTo(world.original.get(pkg.id)! - pkg.quantity, drawn + (sold.get(pkg.id) ?? 0), 1e-6, pkg.tag)
      assert.isAtLeast(pkg.quantity, 0)
    }
  })

  it("generates a facility of 100,000 packages", () => {
    const world = Generate.generate({ ...options, size: { packages: 100_000 } })
    assert.isAtLeast(world.facilities[0]!.packages.length, 99_000)
    assert.strictEqual(
      new Set(world.facilities[0]!.packages.map((p) => p.id)).size,
      world.facilities[0]!.packages.length
    )
  })
})
