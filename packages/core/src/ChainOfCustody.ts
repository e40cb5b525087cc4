/**
 * Chain of custody: a pure assembly of already-fetched resources in the spec's reading order —
 * plants, then harvests, then the package (after the packages it was split from), then its lab
 * results, transfers and sales.
 *
 * The custody line of a package is the package and every package it was split from, transitively.
 * Lab results and transfers of any package on that line belong to the chain; sales belong to it
 * only when they sold the package itself.
 *
 * @since 0.1.0
 */
import { Either, Schema } from "effect"
import { Harvest } from "./Harvest.js"
import { toEpochMillis } from "./internal/calendar.js"
import { LabResult } from "./LabResult.js"
import { Package } from "./Package.js"
import { Plant } from "./Plant.js"
import { ResourceNotFound } from "./ProviderError.js"
import { Sale } from "./Sale.js"
import { Transfer } from "./Transfer.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export const ChainOfCustody = Schema.Struct({
  plants: Schema.Array(Plant),
  harvests: Schema.Array(Harvest),
  source_packages: Schema.Array(Package).annotations({
    description: "The packages this one was split from, oldest first"
  }),
  package: Package,
  lab_results: Schema.Array(LabResult),
  transfers: Schema.Array(Transfer),
  sales: Schema.Array(Sale)
}).annotations({ identifier: "ChainOfCustody", description: "A package's history in the spec's reading order" })

/**
 * @since 0.1.0
 * @category models
 */
export interface ChainOfCustody extends Schema.Schema.Type<typeof ChainOfCustody> {}

/**
 * The resources to assemble from. Extra, unrelated objects are ignored.
 *
 * @since 0.1.0
 * @category models
 */
export interface Pool {
  readonly packages: ReadonlyArray<Package>
  readonly plants: ReadonlyArray<Plant>
  readonly harvests: ReadonlyArray<Harvest>
  readonly lab_results: ReadonlyArray<LabResult>
  readonly transfers: ReadonlyArray<Transfer>
  readonly sales: ReadonlyArray<Sale>
}

const byDateThenId = <A extends { readonly id: string }>(date: (a: A) => string | null) => (x: A, y: A): number => {
  const dx = date(x)
  const dy = date(y)
  if (dx !== dy) {
    if (dx === null) return 1
    if (dy === null) return -1
    const diff = toEpochMillis(dx) - toEpochMillis(dy)
    if (diff !== 0) return diff
  }
  return x.id < y.id ? -1 : x.id > y.id ? 1 : 0
}

const uniqueById = <A extends { readonly id: string }>(items: Iterable<A>): Array<A> => {
  const seen = new Map<string, A>()
  for (const item of items) if (!seen.has(item.id)) seen.set(item.id, item)
  return [...seen.values()]
}

/**
 * The ids of every package a package was split from, transitively, oldest first (a source always
 * comes before the packages made from it). Ids missing from `packages` are skipped.
 *
 * @since 0.1.0
 * @category utils
 */
export const ancestors = (target: Package, packages: ReadonlyArray<Package>): ReadonlyArray<Package> => {
  const index = new Map(packages.map((p) => [p.id as string, p]))
  const visited = new Set<string>([target.id])
  const out: Array<Package> = []
  const visit = (p: Package): void => {
    for (const sourceId of p.source_package_ids) {
      if (visited.has(sourceId)) continue
      visited.add(sourceId)
      const source = index.get(sourceId)
      if (source === undefined) continue
      visit(source)
      out.push(source)
    }
  }
  visit(target)
  return out
}

/**
 * Assembles the chain of custody of `packageId` from `pool`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const assemble = (packageId: string, pool: Pool): Either.Either<ChainOfCustody, ResourceNotFound> => {
  const target = pool.packages.find((p) => p.id === packageId)
  if (target === undefined) return Either.left(ResourceNotFound.of("package", packageId))
  const sources = ancestors(target, pool.packages)
  const line = [...sources, target]
  const lineIds = new Set<string>(line.map((p) => p.id))

  const harvestIds = new Set<string>(line.flatMap((p) => p.source_harvest_ids))
  const harvests = uniqueById(pool.harvests.filter((h) => harvestIds.has(h.id)))
    .sort(byDateThenId((h) => h.harvested_date))
  const plantIds = new Set<string>(harvests.flatMap((h) => h.source_plant_ids))
  const plants = uniqueById(pool.plants.filter((p) => plantIds.has(p.id)))
    .sort(byDateThenId((p) => p.planted_date ?? p.vegetative_date ?? p.flowering_date))

  const lab_results = uniqueById([
    ...line.flatMap((p) => p.lab_results),
    ...pool.lab_results.filter((r) => lineIds.has(r.package_id))
  ]).sort(byDateThenId((r) => r.test_date ?? r.result_date))
  const transfers = uniqueById(pool.transfers.filter((t) => t.packages.some((l) => lineIds.has(l.package_id))))
    .sort(byDateThenId((t) => t.actual_departure ?? t.estimated_departure))
  const sales = uniqueById(pool.sales.filter((s) => s.items.some((i) => i.package_id === target.id)))
    .sort(byDateThenId((s) => s.sale_date))

  return Either.right({ plants, harvests, source_packages: sources, package: target, lab_results, transfers, sales })
}
