/**
 * The names of the state track-and-trace systems Tracebridge speaks to, and US state codes.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * The provider wire value carried by every resource, e.g. `provider_a` (modelled on Metrc) or
 * `provider_b` (modelled on BioTrack): `provider_` and then lower-case letters, digits or `_`
 * (at most 40 characters). The set is open: which providers exist is decided by the one
 * registration list of installed provider modules (see `ProviderModule` and ADR 0010), and a name
 * that is well formed but not registered is refused there, never here.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ProviderName = Schema.String.pipe(
  Schema.pattern(/^provider_[a-z0-9][a-z0-9_]{0,30}$/, {
    message: () => "a provider name is provider_ followed by lower-case letters, digits or _"
  })
).annotations({
  identifier: "ProviderName",
  description:
    "The state track-and-trace system behind a resource (one of the registered providers; see GET /v1/providers)"
})

/**
 * @since 0.1.0
 * @category models
 */
export type ProviderName = typeof ProviderName.Type

/**
 * Whether a string is a well-formed provider name (registered or not).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isProviderName: (u: unknown) => u is ProviderName = Schema.is(ProviderName)

/**
 * The package folder of a provider: `provider_c` lives in `packages/adapter-provider-c`.
 *
 * @since 0.1.0
 * @category getters
 */
export const folderOf = (name: ProviderName): string => `adapter-${name.replace(/_/g, "-")}`

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
