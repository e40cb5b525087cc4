/**
 * The registry from provider name to port. The HTTP layer resolves a connection's provider here,
 * so adding a provider means registering its port, with no change to `http`'s handlers.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Schema } from "effect"
import type * as Scope from "effect/Scope"
import type { ProviderDescriptor } from "./ProviderDescriptor.js"
import type { ProviderName } from "./ProviderName.js"
import type { Service } from "./ProviderPort.js"

/**
 * A provider that no port was registered for (a wiring mistake, not a user error).
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderNotRegistered extends Schema.TaggedError<ProviderNotRegistered>(
  "@tracebridge/core/ProviderRegistry/ProviderNotRegistered"
)("ProviderNotRegistered", { provider: Schema.String, message: Schema.String }) {}

/**
 * @since 0.1.0
 * @category models
 */
export interface Registry {
  readonly get: (provider: string) => Effect.Effect<Service, ProviderNotRegistered>
  readonly providers: ReadonlyArray<ProviderName>
  readonly descriptors: ReadonlyArray<ProviderDescriptor>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class ProviderRegistry extends Context.Tag("@tracebridge/core/ProviderRegistry")<ProviderRegistry, Registry>() {}

/**
 * A registry of the given ports, keyed by each port's descriptor name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (ports: ReadonlyArray<Service>): Registry => {
  const byName = new Map<string, Service>()
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
 * A layer providing the registry of the given ports.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (ports: ReadonlyArray<Service>): Layer.Layer<ProviderRegistry> =>
  Layer.succeed(ProviderRegistry, make(ports))

/**
 * A layer built from effects that make ports (each adapter's `make` needs an `HttpClient`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEffect = <E, R>(
  ports: ReadonlyArray<Effect.Effect<Service, E, R>>
): Layer.Layer<ProviderRegistry, E, Exclude<R, Scope.Scope>> =>
  Layer.scoped(ProviderRegistry, Effect.map(Effect.all(ports), make))
