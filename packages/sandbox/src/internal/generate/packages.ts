/**
 * The packages of a world: the cultivator's bulk flower (one per harvest in turn), the pre-rolls
 * split off them, and the manufacturer's concentrate made from the flower it received; with what
 * each draw takes from its source. Every bulk package and split draws from its own stream.
 *
 * Packages are replaced in place (by index, one scan that stops at the package), never by mapping
 * or filtering the whole list: a facility may hold 100,000 of them.
 */
import type { Harvest, Item, Package } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import * as Seed from "../../Seed.js"
import type { FacilityData } from "../../World.js"
import type { Context } from "./context.js"
import { DAY, HOUR, isoDay, round, touch } from "./context.js"
import type { Cast } from "./facilities.js"
import { harvestCount } from "./plants.js"

/** What a new package is made of. */
export interface Spec {
  readonly item: Item.Item
  readonly quantity: number
  readonly packagedAt: number
  readonly harvests: ReadonlyArray<Harvest.Harvest>
  readonly sources: ReadonlyArray<Package.Package>
  readonly onHold?: boolean
}

/** Makes the `n`-th package of a facility, adds it, and records its original quantity. */
export const make = (ctx: Context, data: FacilityData, n: number, spec: Spec): Package.Package => {
  const { profile, provider, world } = ctx
  const f = world.facilities.indexOf(data)
  const tag = profile.tag("package", f, n)
  const numericId = profile.numeric("package", f, n)
  const providerId = profile.packageId(tag, numericId)
  const metadata = profile.packageMetadata({
    quantity: spec.quantity,
    unitAbbreviation: "g",
    sourceHarvestNames: spec.harvests.map((h) => h.harvest_name),
    at: spec.packagedAt,
    providerItemId: spec.item.provider_item_id
  })
  const pkg: Package.Package = {
    id: Ids.make("package", provider, tag),
    tag,
    source_tag: spec.sources[0]?.tag ?? null,
    item_name: spec.item.name,
    item_category: spec.item.category,
    item_strain: spec.item.strain,
    quantity: spec.quantity,
    unit_of_measure: spec.item.unit_of_measure,
    lab_testing_state: "NotSubmitted",
    is_on_hold: spec.onHold ?? false,
    packaged_date: isoDay(spec.packagedAt),
    expiration_date: null,
    facility_id: data.facility.id,
    provider,
    provider_package_id: providerId,
    source_harvest_ids: spec.harvests.map((h) => h.id),
    source_package_ids: spec.sources.map((s) => s.id),
    lab_results: [],
    metadata
  }
  data.packages.push(pkg)
  world.original.set(pkg.id, spec.quantity)
  touch(ctx, pkg.id, spec.packagedAt)
  return pkg
}

/** Where a package is in its facility's list (-1 when it is not there). */
export const indexOf = (data: FacilityData, id: string) => data.packages.findIndex((p) => p.id === id)

/** Sets a package's quantity at `at`, in place, and marks it changed. */
export const setQuantity = (ctx: Context, data: FacilityData, id: string, quantity: number, at: number) => {
  const i = indexOf(data, id)
  if (i >= 0) {
    const p = data.packages[i]!
    data.packages[i] = {
      ...p,
      quantity: round(quantity, 4),
      metadata: ctx.profile.touchMetadata(p.metadata, at)
    }
  }
  touch(ctx, id, at)
}

/** Takes `quantity` out of `source` into `target` at `at`, and records the draw. */
const draw = (
  ctx: Context,
  data: FacilityData,
  source: Package.Package,
  target: Package.Package,
  quantity: number,
  at: number
) => {
  const current = data.packages[indexOf(data, source.id)]!
  setQuantity(ctx, data, source.id, current.quantity - quantity, at)
  ctx.world.draws.push({ source: source.id, target: target.id, quantity })
}

/**
 * Adds the cultivator's bulk flower packages (`perFacility - 12`, at least one per harvest), the
 * harvests in turn; one in 23 is on hold. Returns them as made.
 */
export const bulk = (ctx: Context, cultivator: FacilityData, perFacility: number): Array<Package.Package> => {
  const { ref, seed } = ctx
  const made: Array<Package.Package> = []
  let packageNo = 0
  const bulkCount = Math.max(harvestCount, perFacility - 12)
  // Per harvest, once: its flower item, its day and the one-element list of its harvests.
  const bulkOf = cultivator.harvests.map((harvest) => ({
    harvest,
    item: cultivator.items.find((it) => it.strain === harvest.strain_name && it.category === "Flower") ??
      cultivator.items[0]!,
    day: Date.parse(`${harvest.harvested_date}T00:00:00Z`),
    harvests: [harvest]
  }))
  for (let i = 0; i < bulkCount; i++) {
    const { day, harvests, item } = bulkOf[i % harvestCount]!
    const pick = Seed.prng(seed, "package", i)
    const packagedAt = day + (2 + (i % 5)) * DAY + Math.floor(pick() * 8) * HOUR
    made.push(make(ctx, cultivator, ++packageNo, {
      item,
      quantity: round(100 + pick() * 400, 2),
      packagedAt: Math.min(packagedAt, ref - HOUR),
      harvests,
      sources: [],
      onHold: i % 23 === 22
    }))
  }
  return made
}

/**
 * Adds six pre-roll packages split off the first bulk packages (numbered after them), inheriting
 * their harvests, and draws their quantity from their sources. Returns them as made.
 */
export const split = (
  ctx: Context,
  cultivator: FacilityData,
  bulk: ReadonlyArray<Package.Package>
): Array<Package.Package> => {
  const { ref, seed } = ctx
  const splits: Array<Package.Package> = []
  let packageNo = bulk.length
  for (let i = 0; i < 6; i++) {
    const source = bulk[i % harvestCount]!
    const pick = Seed.prng(seed, "split", i)
    const item = cultivator.items.find((it) => it.strain === source.item_strain && it.category === "Pre-Roll") ??
      cultivator.items[2]!
    const quantity = round(10 + pick() * 20, 2)
    const at = Date.parse(`${source.packaged_date}T00:00:00Z`) + 3 * DAY
    const child = make(ctx, cultivator, ++packageNo, {
      item,
      quantity,
      packagedAt: Math.min(at, ref - 2 * HOUR),
      harvests: cultivator.harvests.filter((h) => source.source_harvest_ids.includes(h.id)),
      sources: [source]
    })
    draw(ctx, cultivator, source, child, quantity, Math.min(at, ref - 2 * HOUR))
    splits.push(child)
  }
  return splits
}

/**
 * Adds the manufacturer's concentrate, made from the first two packages it holds (the flower it
 * received): half of each source goes in, a fifth of that comes out.
 */
export const manufacture = (ctx: Context, { cultivator, manufacturer }: Cast): void => {
  const { ref } = ctx
  for (const [i, source] of manufacturer.packages.slice(0, 2).entries()) {
    const item = manufacturer.items.find((it) => it.category === "Concentrate") ?? manufacturer.items[3]!
    const at = ref - (8 - i) * DAY
    const input = round(source.quantity / 2, 2)
    const child = make(ctx, manufacturer, 1000 + i, {
      item,
      quantity: round(input * 0.2, 2),
      packagedAt: at,
      harvests: cultivator.harvests.filter((h) => source.source_harvest_ids.includes(h.id)),
      sources: [source]
    })
    draw(ctx, manufacturer, source, child, input, at)
  }
}

/**
 * Adds the lab's samples: a few grams taken from three untested bulk packages of the cultivator,
 * submitted for testing. Only a testing laboratory records lab results (Metrc's `labtests/record`,
 * BioTrack's QA results), on a package it holds, so the sandbox's lab holds these to test (their
 * lab testing state is the lab's own: not submitted anywhere).
 */
export const samples = (ctx: Context, { cultivator, lab }: Cast, bulk: ReadonlyArray<Package.Package>): void => {
  const { ref } = ctx
  const tested = new Set(cultivator.labResults.map((r) => r.package_id as string))
  // the first three that qualify (one scan that stops early: a facility may hold 100,000 packages)
  const untested: Array<Package.Package> = []
  for (const p of bulk) {
    if (untested.length === 3) break
    if (!p.is_on_hold && !tested.has(p.id) && indexOf(cultivator, p.id) >= 0) untested.push(p)
  }
  for (const [i, source] of untested.entries()) {
    const item = lab.items.find((it) => it.strain === source.item_strain && it.category === source.item_category) ??
      lab.items[0]!
    const at = ref - (6 - i) * DAY
    const current = cultivator.packages[indexOf(cultivator, source.id)]!
    const sample = make(ctx, lab, 2000 + i, {
      item,
      quantity: 5,
      packagedAt: at,
      harvests: cultivator.harvests.filter((h) => source.source_harvest_ids.includes(h.id)),
      sources: [current]
    })
    draw(ctx, cultivator, current, sample, 5, at)
  }
}
