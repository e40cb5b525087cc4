/**
 * A provider as one module value: what its package exports for the rest of Tracebridge to install
 * it (DECISIONS "Providers are modules", ADR 0010). The descriptor says what the system is and can
 * do; `production` and `sandbox` build its port (the first against the real system, its settings
 * read from configuration; the second against the sandbox's emulator, with no pacing); `normalize`
 * holds its pure wire → core mappers for services that bring their own transport.
 *
 * Which providers exist is decided by one registration list of these values; {@link problems}
 * checks such a list at start-up, so an unregistered or ill-described provider is a clear error
 * before the first request.
 *
 * @since 0.1.0
 */
import type { ConfigError, Effect } from "effect"
import { Schema } from "effect"
import * as Capabilities from "./Capabilities.js"
import { CapabilityTag } from "./Facility.js"
import type { ProviderDescriptor } from "./ProviderDescriptor.js"
import * as Descriptor from "./ProviderDescriptor.js"
import { Environment, ProviderName, UsState } from "./ProviderName.js"
import type { Service } from "./ProviderPort.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface ProviderModule<R = never> {
  readonly descriptor: ProviderDescriptor
  /**
   * The port against the real state system; its settings (a vendor key, pacing) come from
   * configuration. Every request it sends takes a token of the `UpstreamGovernor` in context when
   * it is built (ADR 0015): the host decides where the buckets live.
   */
  readonly production: Effect.Effect<Service, ConfigError.ConfigError, R>
  /** The port against the sandbox's emulator of this system: no pacing, no backoff, no vendor key. */
  readonly sandbox: Effect.Effect<Service, never, R>
  /** The adapter's pure wire → core mappers (its `Normalize` module). */
  readonly normalize: unknown
  /** The environment variables holding secrets it reads (a vendor key): never logged, redacted by value. */
  readonly secretConfig: ReadonlyArray<string>
  /**
   * The environment variable holding the integrator's vendor key that its production port needs,
   * when it needs one (provider_a: `PROVIDER_A_VENDOR_KEY`). While it is unset or empty, production
   * calls fail without a request sent, and the dashboard's Issues feed lists each production
   * connection of the provider as `vendor_key_missing` until the API runs with the key set.
   */
  readonly vendorKeyConfig?: string
  /**
   * The system's own error code in one of its answers, where it has one beyond the HTTP status
   * (BioTrack answers HTTP 200 with `success: 0` and an `errorcode`): the request log shows it
   * beside each upstream call. Only called on bodies of at most {@link UPSTREAM_ERROR_BODY_LIMIT}
   * characters (an error answer is short); undefined when the answer carries none.
   */
  readonly upstreamErrorCode?: (answer: { readonly status: number; readonly body: string }) => string | undefined
}

/**
 * The longest answer body a module's `upstreamErrorCode` is asked about.
 *
 * @since 0.1.0
 * @category constants
 */
export const UPSTREAM_ERROR_BODY_LIMIT = 4096

/**
 * What `GET /v1/providers` says of one provider: its states with their licence types,
 * capabilities and environments, and the login fields the Connect widget asks for.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Summary = Schema.Struct({
  name: ProviderName,
  display_name: Schema.String,
  states: Schema.Array(Schema.Struct({
    state: UsState,
    license_types: Schema.Array(Schema.String),
    capabilities: Capabilities.Capabilities,
    environments: Schema.Array(Environment)
  })),
  login_fields: Schema.Array(Schema.Struct({
    name: Schema.String,
    label: Schema.String,
    secret: Schema.Boolean.annotations({ description: "Masked in the form; never logged or returned" })
  })),
  writes: Schema.Array(Schema.Struct({
    name: Schema.Literal("split_package", "record_lab_result", "create_transfer"),
    facility_capability: Schema.NullOr(CapabilityTag).annotations({
      description: "The capability a facility needs for the write (e.g. labs: a testing laboratory), or null"
    })
  })).annotations({ description: "The sandbox writes the provider supports, and which facilities may make each" })
}).annotations({ identifier: "Provider", description: "An installed provider and what it can do per state" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Summary extends Schema.Schema.Type<typeof Summary> {}

/**
 * The summary of a provider, from its descriptor alone. Every served state has a sandbox (the
 * emulator serves every state); production where the descriptor has a production host.
 *
 * @since 0.1.0
 * @category getters
 */
export const summary = (d: ProviderDescriptor): Summary => ({
  name: d.name,
  display_name: d.displayName,
  states: Descriptor.states(d).map((state) => ({
    state,
    license_types: Descriptor.licenseTypesFor(d, state),
    capabilities: d.capabilities[state]!,
    environments: d.baseUrls[state]?.production === undefined
      ? ["sandbox" as const]
      : ["sandbox" as const, "production" as const]
  })),
  login_fields: d.credentialFields.map((f) => ({ name: f.name, label: f.label, secret: f.secret })),
  writes: d.writes.map((name) => ({ name, facility_capability: d.writeNeeds?.[name] ?? null }))
})

/**
 * What is wrong with a registration list: a name registered twice, and each descriptor's own
 * problems (`ProviderDescriptor.problems`), prefixed with the provider's name. Empty when sound.
 *
 * @since 0.1.0
 * @category validation
 */
export const problems = (
  modules: ReadonlyArray<{ readonly descriptor: ProviderDescriptor }>
): ReadonlyArray<string> => {
  const out: Array<string> = []
  const seen = new Set<string>()
  for (const { descriptor } of modules) {
    if (seen.has(descriptor.name)) out.push(`${descriptor.name} is registered twice`)
    seen.add(descriptor.name)
    for (const problem of Descriptor.problems(descriptor)) out.push(`${descriptor.name}: ${problem}`)
  }
  if (modules.length === 0) out.push("no provider is registered")
  return out
}
