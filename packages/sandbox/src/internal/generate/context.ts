/**
 * What every step of world generation shares: the world being built, the seed its entities draw
 * from, the reference instant, the provider's profile and capabilities in the state, and the
 * seeded helpers and formatters.
 *
 * Determinism: nothing here draws; each step derives its own streams from `seed` (`Seed.prng`,
 * `Seed.integer` for faker), and the steps run in a fixed order (see `Generate.generate`).
 */
import type { Facility, ProviderDescriptor, ProviderName } from "@tracebridge/core"
import { Capabilities } from "@tracebridge/core"
import type { Profile } from "../../Profile.js"
import * as Profiles from "../../Profile.js"
import * as Seed from "../../Seed.js"
import { Stamps, type World } from "../../World.js"
import * as Slots from "../slot.js"

/** One day, in ms. */
export const DAY = 86_400_000
/** One hour, in ms. */
export const HOUR = 3_600_000

/**
 * The day of an instant (`YYYY-MM-DD`), remembered: a large world has many packages but few
 * distinct instants (packages share days and hours), so each string is built once.
 */
export const isoDay = Profiles.memo((ms: number) => new Date(ms).toISOString().slice(0, 10))

/** An instant in whole seconds: what every provider can carry. */
export const isoTime = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString()

/** `n` rounded to `digits` decimals. */
export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits

/** What a world is generated from (the public `Generate.Options` without its size). */
export interface Input {
  readonly provider: ProviderName.ProviderName
  readonly descriptor: ProviderDescriptor.ProviderDescriptor
  readonly profile: Profile
  readonly state: ProviderName.UsState
  readonly seed: string
  readonly login: string
  readonly referenceDate: string
}

/** A world being generated, and what its steps draw on. */
export interface Context {
  readonly provider: ProviderName.ProviderName
  readonly state: ProviderName.UsState
  /** The seed entities draw from: seed, provider, state and login (without its "~<key>"). */
  readonly seed: string
  /** A number from the seed, for the profile's licence numbers. */
  readonly numericSeed: number
  /** The reference instant, in epoch ms: every generated date is at or before it. */
  readonly ref: number
  readonly profile: Profile
  /** The provider's capabilities in the state (all, for a state its descriptor does not list). */
  readonly capabilities: Capabilities.Capabilities
  /** The world being built, with no facility yet. */
  readonly world: World
}

/**
 * The seed everything of one world is drawn from. A login may carry "~<key>" (a connection id
 * behind /v1): same world, kept apart.
 */
export const worldSeed = (
  input: { readonly seed: string; readonly provider: string; readonly state: string; readonly login: string }
): string => `${input.seed}|${input.provider}|${input.state}|${input.login.split("~")[0]}`

/** A context with an empty world. */
export const make = (input: Input): Context => {
  const { login, provider, state } = input
  const seed = worldSeed(input)
  const profile = input.profile
  const ref = Date.parse(input.referenceDate)
  const fields: Omit<World, typeof Slots.worldSlots> = {
    provider,
    state,
    seed: input.seed,
    login,
    referenceDate: new Date(ref).toISOString(),
    facilities: [],
    transfers: [],
    modified: new Stamps(),
    counters: { next: 1 },
    original: new Map(),
    holds: new Map(),
    draws: [],
    [Profiles.key]: profile
  }
  const world = Slots.withSlots<World>(fields)
  return {
    provider,
    state,
    seed,
    numericSeed: Seed.integer(seed, "world", 0),
    ref,
    profile,
    capabilities: input.descriptor.capabilities[state] ?? Capabilities.make(true),
    world
  }
}

/** Records that the object `id` changed at `at` (kept in whole seconds). */
export const touch = (ctx: Context, id: string, at: number): void => {
  ctx.world.modified.set(id, Math.floor(at / 1000) * 1000)
}

/** The fields that place a record in a facility of the world's provider. */
export const scopedOf = (ctx: Context, facility: Facility.Facility) => ({
  facility_id: facility.id,
  provider: ctx.provider
})
