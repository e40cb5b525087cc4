/**
 * provider_b, the state system modelled on the BioTrack classic action API: its descriptor, and
 * the provider port built over the session client (`ProviderBClient`) and the driver.
 *
 * Reads go through the `sync_*` tables (whole tables, no pages). The adapter keeps each table per
 * connection for {@link CACHE_TTL} so that page 2 does not download everything again, filters it
 * to the facility's `location`, drops deleted rows, derives the core objects and pages locally.
 * Every write clears the connection's tables first and reads the result back afterwards.
 *
 * ```ts
 * import { ProviderB } from "@tracebridge/adapter-provider-b"
 * import { FetchHttpClient } from "@effect/platform"
 * const PortLive = ProviderB.layer.pipe(Layer.provide(FetchHttpClient.layer))
 * ```
 *
 * @since 0.1.0
 */
import type { HttpClient } from "@effect/platform"
import type { ProviderModule } from "@tracebridge/core"
import { ProviderPort } from "@tracebridge/core"
import type { Scope } from "effect"
import { Duration, Effect, Layer } from "effect"
import * as Descriptor from "./internal/descriptor.js"
import { makeDriver as driverOf } from "./internal/driver.js"
import * as Tables from "./internal/tables.js"
import * as Normalize from "./Normalize.js"
import * as ProviderBClient from "./ProviderBClient.js"

/**
 * The state hosts of the classic API (overridable per session with `baseUrl`).
 *
 * @since 0.1.0
 * @category constants
 */
export const hosts = Descriptor.hosts

/**
 * The login the end user enters: the company UBI (sent as `license_number`), username and password.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Credentials = Descriptor.Credentials

/**
 * How long a downloaded sync table is reused for the same connection.
 *
 * @since 0.1.0
 * @category constants
 */
export const CACHE_TTL = Tables.CACHE_TTL

/**
 * The capabilities of every served state: no sales deliveries (BioTrack has none), no plant
 * batches (plants are tagged one by one from the start) and no patients (the classic API has no
 * patient registry, only card look-ups at sale time).
 *
 * @since 0.1.0
 * @category constants
 */
export const stateCapabilities = Descriptor.stateCapabilities

/**
 * @since 0.1.0
 * @category descriptors
 */
export const descriptor = Descriptor.descriptor

/**
 * BioTrack's facts (the time zone of each served state, the QA panels by `type`), as the
 * descriptor carries them: what the adapter and the emulator both read, never a codec.
 *
 * @since 0.1.0
 * @category constants
 */
export const facts: typeof Descriptor.facts = Descriptor.facts

/**
 * Builds the driver over the session client (for tests and for wrapping); most callers want
 * {@link make}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeDriver: (client: ProviderBClient.Client) => ProviderPort.Driver = driverOf

/**
 * The port for provider_b, over an `HttpClient`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ProviderPort.Service, never, HttpClient.HttpClient> = Effect.map(
  ProviderBClient.make,
  (client) => ProviderPort.make(makeDriver(client))
)

/**
 * The port for the sandbox's emulator: no sync table outlives its read. The emulator's world
 * changes under the adapter (simulated scenarios, resets) without a write through it, and the
 * sandbox keeps its reads by world version itself; a table kept for {@link CACHE_TTL} would answer
 * reads, and the managed sync's polls, from before the change.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSandbox: Effect.Effect<ProviderPort.Service, never, HttpClient.HttpClient> = Effect.map(
  ProviderBClient.make,
  (client) => ProviderPort.make(driverOf(client, Duration.zero))
)

/**
 * The port as a layer (for code that works with one provider at a time).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ProviderPort.ProviderPort, never, HttpClient.HttpClient> = Layer.effect(
  ProviderPort.ProviderPort,
  make
)

/**
 * provider_b as one module value: the descriptor, the port (the same against the real system and
 * the sandbox's emulator, except that the sandbox's keeps no sync table past its read) and the
 * pure mappers. The registration list installs it (ADR 0010).
 *
 * @since 0.1.0
 * @category modules
 */
export const module: ProviderModule.ProviderModule<HttpClient.HttpClient | Scope.Scope> = {
  descriptor,
  production: make,
  sandbox: makeSandbox,
  normalize: Normalize,
  secretConfig: [],
  upstreamErrorCode: ProviderBClient.errorCodeOf
}
