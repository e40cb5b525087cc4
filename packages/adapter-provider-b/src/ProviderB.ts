/**
 * provider_b, the state system modelled on the BioTrack classic action API: its descriptor as
 * data. The session client, wire schemas and mappers arrive with the adapter's own issue.
 *
 * @since 0.1.0
 */
import type { ProviderDescriptor, ProviderName } from "@tracebridge/core"
import { Capabilities } from "@tracebridge/core"
import { Schema } from "effect"

/**
 * The state hosts of the classic `serverjson.asp` API. BioTrack's training mode runs on the same
 * host (a `training` flag in the body), so sandbox and production share it.
 *
 * @since 0.1.0
 * @category constants
 */
export const hosts: Partial<Record<ProviderName.UsState, string>> = {
  AR: "https://arstems.arkansas.gov/serverjson.asp",
  CT: "https://trace.ct.biotr.ac/serverjson.asp",
  HI: "https://hicsts.hawaii.gov/serverjson.asp",
  IL: "https://mcmonitoring.agr.illinois.gov/serverjson.asp"
}

/**
 * The login the end user enters: the company UBI (sent as `license_number`), username and password.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Credentials = Schema.Struct({
  ubi: Schema.String.pipe(Schema.pattern(/^\d{9}$/, { message: () => "the UBI is 9 digits" })),
  username: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  password: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
})

/**
 * @since 0.1.0
 * @category descriptors
 */
export const descriptor: ProviderDescriptor.ProviderDescriptor = {
  name: "provider_b",
  displayName: "BioTrack",
  credentialFields: [
    { name: "ubi", label: "Company UBI", secret: false, description: "The 9-digit business identifier" },
    { name: "username", label: "Username", secret: false },
    { name: "password", label: "Password", secret: true }
  ],
  credentials: Credentials,
  baseUrls: Object.fromEntries(Object.entries(hosts).map(([s, url]) => [s, { sandbox: url, production: url }])),
  providerPageSize: null,
  rateLimit: {
    requestsPerSecond: 5,
    concurrency: 2,
    retryAfterHeader: false,
    notes: "No published limits; conservative pacing per session"
  },
  capabilities: Object.fromEntries(
    Object.keys(hosts).map((s) => [
      s,
      Capabilities.make(true, { sales_deliveries: false, plant_batches: false, items: false, strains: false })
    ])
  ),
  writes: []
}
