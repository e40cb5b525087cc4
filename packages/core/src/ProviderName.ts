/**
 * The names of the state track-and-trace systems Tracebridge speaks to, and US state codes.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * The provider wire value carried by every resource: `provider_a` (modelled on Metrc)
 * or `provider_b` (modelled on BioTrack). A new provider adds its name here.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ProviderName = Schema.Literal("provider_a", "provider_b").annotations({
  identifier: "ProviderName",
  description: "The state track-and-trace system behind a resource"
})

/**
 * @since 0.1.0
 * @category models
 */
export type ProviderName = typeof ProviderName.Type

/**
 * Every provider name, in a stable order.
 *
 * @since 0.1.0
 * @category constants
 */
export const all: ReadonlyArray<ProviderName> = ProviderName.literals

/**
 * Two-letter codes of the US states, DC and the territories that run track-and-trace systems.
 *
 * @since 0.1.0
 * @category constants
 */
export const stateCodes = [
  "AK",
  "AL",
  "AR",
  "AZ",
  "CA",
  "CO",
  "CT",
  "DC",
  "DE",
  "FL",
  "GA",
  "HI",
  "IA",
  "ID",
  "IL",
  "IN",
  "KS",
  "KY",
  "LA",
  "MA",
  "MD",
  "ME",
  "MI",
  "MN",
  "MO",
  "MS",
  "MT",
  "NC",
  "ND",
  "NE",
  "NH",
  "NJ",
  "NM",
  "NV",
  "NY",
  "OH",
  "OK",
  "OR",
  "PA",
  "RI",
  "SC",
  "SD",
  "TN",
  "TX",
  "UT",
  "VA",
  "VT",
  "WA",
  "WI",
  "WV",
  "WY",
  "GU",
  "PR",
  "VI"
] as const

/**
 * A two-letter US state code in upper case, e.g. `CO`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UsState = Schema.Literal(...stateCodes).annotations({
  identifier: "UsState",
  description: "Two-letter US state code (upper case)"
})

/**
 * @since 0.1.0
 * @category models
 */
export type UsState = typeof UsState.Type

/**
 * Where a connection's data lives: the seeded sandbox or the real state system.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Environment = Schema.Literal("sandbox", "production").annotations({ identifier: "Environment" })

/**
 * @since 0.1.0
 * @category models
 */
export type Environment = typeof Environment.Type
