/**
 * The ports by provider name: each installed provider's port, found by its descriptor's name. The
 * HTTP layer resolves a connection's provider here, so adding a provider means adding its port,
 * with no change to `http`'s handlers. (The sandbox's `Registry` is another thing: it pairs each
 * catalog entry with its emulator.)
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"
import type * as Scope from "effect/Scope"
import type { ProviderDescriptor } from "./ProviderDescriptor.js"
import type { ProviderName } from "./ProviderName.js"
import type * as ProviderPort from "./ProviderPort.js"

/**
 * A provider that no port was registered for (a wiring mistake, not a user error).
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderNotRegistered extends Schema.TaggedError<ProviderNotRegistered>(
  "@tracebridge/core/ProviderPorts/ProviderNotRegistered"
)("ProviderNotRegistered", { provider: Schema.String, message: Schema.String }) {}

/**
 * The ports, by provider name.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly get: (provider: string) => Effect.Effect<ProviderPort.Service, ProviderNotRegistered>
  readonly providers: ReadonlyArray<ProviderName>
  readonly descriptors: ReadonlyArray<ProviderDescriptor>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class ProviderPorts extends Context.Tag("@tracebridge/core/ProviderPorts")<ProviderPorts, Service>() {}

/**
 * The given ports, keyed by each port's descriptor name. The same name twice throws (a wiring
 * mistake).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (ports: ReadonlyArray<ProviderPort.Service>): Service => {
  const byName = new Map<string, ProviderPort.Service>()
  for (const port of ports) {
    if (byName.has(port.descriptor.name)) throw new Error(`provider ${port.descriptor.name} registered twice`)
    byName.set(port.descriptor.name, port)
  }
  // In registration order: the order of the one list of installed providers.
  const providers = [...byName.keys()]
  return {
    providers,
    descriptors: providers.map((name) => byName.get(name)!.descriptor),
    get: (provider) => {
      const port = byName.get(provider)
      return port === undefined
        ? Effect.fail(
          new ProviderNotRegistered({
            provider,
            message: `no port is registered for ${provider}; registered: ${providers.join(", ") || "none"}`
          })
        )
        : Effect.succeed(port)
    }
  }
}

/**
 * A layer providing the given ports.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (ports: ReadonlyArray<ProviderPort.Service>): Layer.Layer<ProviderPorts> =>
  Layer.succeed(ProviderPorts, make(ports))

/**
 * A layer built from effects that make ports (each adapter's `make` needs an `HttpClient`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEffect = <E, R>(
  ports: ReadonlyArray<Effect.Effect<ProviderPort.Service, E, R>>
): Layer.Layer<ProviderPorts, E, Exclude<R, Scope.Scope>> =>
  Layer.scoped(ProviderPorts, Effect.map(Effect.all(ports), make))
