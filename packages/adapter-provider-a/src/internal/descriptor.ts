import type { ProviderDescriptor, ProviderName } from "@tracebridge/core"
import { Capabilities } from "@tracebridge/core"
import { Schema } from "effect"

/**
 * The states a Metrc-style system serves (lower-case host prefixes per state).
 *
 * @since 0.1.0
 * @category constants
 */
export const states = [
  "AL",
  "CA",
  "CO",
  "DC",
  "GU",
  "IL",
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
  "NJ",
  "NV",
  "NY",
  "OH",
  "OK",
  "OR",
  "RI",
  "SD",
  "VA",
  "VI",
  "WV"
] as const satisfies ReadonlyArray<ProviderName.UsState>

/**
 * The IANA time zone of each state's Metrc instance, exactly the served states (the type refuses
 * a missing or an extra one): Metrc writes its local times (`SalesDateTime`, `Estimated…DateTime`)
 * without an offset, in it. The adapter reads them in it and the emulator writes them in it.
 *
 * @since 0.1.0
 * @category constants
 */
export const timeZones: { readonly [S in (typeof states)[number]]: string } = {
  AL: "America/Chicago",
  CA: "America/Los_Angeles",
  CO: "America/Denver",
  DC: "America/New_York",
  GU: "Pacific/Guam",
  IL: "America/Chicago",
  KY: "America/New_York",
  LA: "America/Chicago",
  MA: "America/New_York",
  MD: "America/New_York",
  ME: "America/New_York",
  MI: "America/Detroit",
  MN: "America/Chicago",
  MO: "America/Chicago",
  MS: "America/Chicago",
  MT: "America/Denver",
  NJ: "America/New_York",
  NV: "America/Los_Angeles",
  NY: "America/New_York",
  OH: "America/New_York",
  OK: "America/Chicago",
  OR: "America/Los_Angeles",
  RI: "America/New_York",
  SD: "America/Chicago",
  VA: "America/New_York",
  VI: "America/St_Thomas",
  WV: "America/New_York"
}

/**
 * Metrc's facts: the time zone of each served state. Its lab tests are named, not coded, so their
 * category and unit come from core's `LabResult.classifyTest`.
 *
 * @since 0.1.0
 * @category constants
 */
export const facts: ProviderDescriptor.Facts = { timeZones }

/**
 * States where licensed sales deliveries to consumers exist, so `/sales/v2/deliveries` is served.
 *
 * @since 0.1.0
 * @category constants
 */
export const salesDeliveryStates: ReadonlyArray<ProviderName.UsState> = [
  "CA",
  "CO",
  "DC",
  "MA",
  "MI",
  "MN",
  "MO",
  "NJ",
  "NV",
  "NY",
  "OR"
]

/**
 * The login the end user enters: their personal user API key. The vendor (integrator) key is
 * Tracebridge's own and comes from configuration, never from the user.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Credentials = Schema.Struct({
  user_key: Schema.String.pipe(Schema.minLength(8), Schema.maxLength(200))
})

const hosts = (state: string) => ({
  production: `https://api-${state.toLowerCase()}.metrc.com`,
  sandbox: `https://sandbox-api-${state.toLowerCase()}.metrc.com`
})

export const descriptor: ProviderDescriptor.ProviderDescriptor = {
  name: "provider_a",
  displayName: "Metrc",
  credentialFields: [
    {
      name: "user_key",
      label: "User API key",
      secret: true,
      description: "Your personal API key from the state system's profile page"
    }
  ],
  loginKey: ["user_key"],
  licenseTypes: ["Cultivation", "Manufacturing", "Testing Laboratory", "Adult-Use Retail", "Medical Retail"],
  credentials: Credentials,
  baseUrls: Object.fromEntries(states.map((s) => [s, hosts(s)])),
  providerPageSize: 20,
  syncWindowHours: 24,
  rateLimit: {
    requestsPerSecond: 50,
    concurrency: 10,
    retryAfterHeader: true,
    notes: "GET only; per facility (and 150/s, 30 concurrent per vendor key), after ThunkMetrc's client defaults"
  },
  capabilities: Object.fromEntries(
    states.map((s) => [s, Capabilities.make(true, { sales_deliveries: salesDeliveryStates.includes(s) })])
  ),
  writes: ["split_package", "record_lab_result", "create_transfer"],
  // Metrc lets only testing-facility licences record results (POST /labtests/v2/record)
  writeNeeds: { record_lab_result: "labs" },
  facts
}
