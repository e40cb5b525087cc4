/**
 * Seeded world generation. From a seed, a login, a provider and state, and a reference date, it
 * builds a licensed operation: a cultivator, a manufacturer, a testing lab, an adult-use
 * dispensary and (where the state has patients) a medical dispensary, with strains, items,
 * locations, plants, harvests, packages split from packages, lab results, transfers in every
 * status, sales and sales deliveries. Chain of custody holds, and quantities add up.
 *
 * Determinism: every entity draws from its own stream (`Seed.prng`, and faker seeded per entity
 * for names), so that adding a kind of entity shifts no other; the only time is the reference
 * date passed in. Each concept is built by its own private module (`internal/generate/`); this
 * module runs them in a fixed order, which is part of the world (a world's JSON follows the order
 * in which its records and change stamps were added).
 *
 * @since 0.1.0
 */
import type { ProviderDescriptor, ProviderName } from "@tracebridge/core"
import * as catalog from "./internal/generate/catalog.js"
import * as context from "./internal/generate/context.js"
import * as facilities from "./internal/generate/facilities.js"
import * as labResults from "./internal/generate/labResults.js"
import * as packages from "./internal/generate/packages.js"
import * as patients from "./internal/generate/patients.js"
import * as plants from "./internal/generate/plants.js"
import * as sales from "./internal/generate/sales.js"
import * as transfers from "./internal/generate/transfers.js"
import type { Profile } from "./Profile.js"
import type { World } from "./World.js"

/**
 * How big a world is.
 *
 * @since 0.1.0
 * @category models
 */
export type Size = "small" | "large" | { readonly packages: number }

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly provider: ProviderName.ProviderName
  /** The provider's descriptor (its capabilities per state shape the world). */
  readonly descriptor: ProviderDescriptor.ProviderDescriptor
  /** How the provider's identifiers and details look. */
  readonly profile: Profile
  readonly state: ProviderName.UsState
  readonly seed: string
  readonly login: string
  /** ISO 8601; every generated date is at or before it. */
  readonly referenceDate: string
  readonly size?: Size
}

/** The cultivator's package count of a size (the other facilities hold a few). */
const packagesPerFacility = (size: Size | undefined) =>
  size === undefined || size === "small" ? 40 : size === "large" ? 2_000 : size.packages

/**
 * Generates the world of a login.
 *
 * @since 0.1.0
 * @category constructors
 */
export const generate = (options: Options): World => {
  const ctx = context.make(options)
  const cast = facilities.generate(ctx)
  const { cultivator, medical, retail } = cast
  catalog.generate(ctx)
  plants.generate(ctx, cultivator)
  const bulk = packages.bulk(ctx, cultivator, packagesPerFacility(options.size))
  labResults.generate(ctx, cast, bulk)
  const splits = packages.split(ctx, cultivator, bulk)
  transfers.generate(ctx, cast, bulk, splits)
  packages.manufacture(ctx, cast)
  packages.samples(ctx, cast, bulk)
  if (medical) patients.generate(ctx, medical)
  sales.generate(ctx, retail, 12, [])
  if (medical) sales.generate(ctx, medical, 6, medical.patients)
  if (ctx.capabilities.sales_deliveries) sales.deliveries(ctx, retail)
  ctx.world.counters.next = 900_000
  return ctx.world
}
