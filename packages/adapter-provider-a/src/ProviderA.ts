/**
 * provider_a, the state system modelled on the Metrc REST API: its descriptor, and the provider
 * port built over the client (`ProviderAClient`) and the driver.
 *
 * ```ts
 * import { ProviderA, ProviderAConfig } from "@tracebridge/adapter-provider-a"
 * import { FetchHttpClient } from "@effect/platform"
 * const PortLive = ProviderA.layer.pipe(Layer.provide(ProviderAConfig.layerConfig), Layer.provide(FetchHttpClient.layer))
 * ```
 *
 * @since 0.1.0
 */
import type { HttpClient } from "@effect/platform"
import type { ProviderDescriptor, ProviderModule } from "@tracebridge/core"
import { LabResult, ProviderPort } from "@tracebridge/core"
import type { Scope } from "effect"
import { Effect, Layer, Redacted } from "effect"
import * as Descriptor from "./internal/descriptor.js"
import { makeDriver as driverOf } from "./internal/driver.js"
import * as Normalize from "./Normalize.js"
import * as ProviderAClient from "./ProviderAClient.js"
import { ProviderAConfig } from "./ProviderAConfig.js"
import * as ProviderAConfig_ from "./ProviderAConfig.js"

/**
 * The states a Metrc-style system serves.
 *
 * @since 0.1.0
 * @category constants
 */
export const states = Descriptor.states

/**
 * States where licensed sales deliveries exist, so `/sales/v2/deliveries` is served.
 *
 * @since 0.1.0
 * @category constants
 */
export const salesDeliveryStates = Descriptor.salesDeliveryStates

/**
 * Metrc's facts (the time zone of each served state), as the descriptor carries them: what the
 * adapter and the emulator both read, never a codec.
 *
 * @since 0.1.0
 * @category constants
 */
export const facts: ProviderDescriptor.Facts = Descriptor.facts

/**
 * The login the end user enters: their personal user API key. The vendor (integrator) key is
 * Tracebridge's own and comes from `ProviderAConfig`, never from the user.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Credentials = Descriptor.Credentials

/**
 * @since 0.1.0
 * @category descriptors
 */
export const descriptor = Descriptor.descriptor

/**
 * The driver (for tests and for wrapping); most callers want {@link make}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeDriver: Effect.Effect<
  ProviderPort.Driver,
  never,
  HttpClient.HttpClient | ProviderAConfig | Scope.Scope
> = Effect.gen(function*() {
  const client = yield* ProviderAClient.make
  const settings = yield* ProviderAConfig
  return driverOf(client, settings)
})

/**
 * The provider_a port: the driver wrapped by `ProviderPort.make`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ProviderPort.Service, never, HttpClient.HttpClient | ProviderAConfig | Scope.Scope> =
  Effect.map(makeDriver, (driver) => ProviderPort.make(driver))

/**
 * The port as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ProviderPort.ProviderPort, never, HttpClient.HttpClient | ProviderAConfig> = Layer
  .scoped(
    ProviderPort.ProviderPort,
    make
  )

/**
 * The category and unit provider_a results get from a lab test name (Metrc rows carry neither):
 * `THC` → potency, `%`; `Pesticides` → pesticides, `ppm`; a unit in parentheses wins. Core's
 * neutral vocabulary, `LabResult.classifyTest`, kept here under its old name.
 *
 * @since 0.1.0
 * @category utils
 */
export const classifyLabTest: (testName: string) => { readonly category: string; readonly unit: string | null } =
  LabResult.classifyTest

/**
 * provider_a as one module value: the descriptor, the production port (its settings from
 * `ProviderAConfig.layerConfig`'s environment; the vendor key is empty until
 * `PROVIDER_A_VENDOR_KEY` is set), the sandbox port (no pacing, no backoff) and the pure mappers.
 * The registration list installs it (ADR 0010).
 *
 * @since 0.1.0
 * @category modules
 */
export const module: ProviderModule.ProviderModule<HttpClient.HttpClient | Scope.Scope> = {
  descriptor: Descriptor.descriptor,
  production: Effect.flatMap(
    ProviderAConfig_.fromEnvironment,
    (settings) =>
      Effect.zipRight(
        Redacted.value(settings.vendorKey) === ""
          ? Effect.logWarning(
            "provider_a: PROVIDER_A_VENDOR_KEY is not set; production provider_a calls answer 503 provider_unavailable until it is"
          )
          : Effect.void,
        Effect.provide(make, ProviderAConfig_.layer(settings))
      )
  ),
  sandbox: Effect.provide(
    make,
    ProviderAConfig_.layer({
      vendorKey: Redacted.make("tracebridge-sandbox"),
      retryBaseDelay: 0,
      perFacility: { requestsPerSecond: 1_000_000, concurrency: 64, burst: 1_000_000 },
      perVendorKey: { requestsPerSecond: 1_000_000, concurrency: 256 }
    })
  ),
  normalize: Normalize,
  secretConfig: ["PROVIDER_A_VENDOR_KEY"],
  vendorKeyConfig: "PROVIDER_A_VENDOR_KEY"
}
