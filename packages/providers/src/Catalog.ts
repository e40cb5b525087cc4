/**
 * The provider catalog: the one registration list of installed providers (DECISIONS "Providers
 * are modules", ADR 0010 and 0022). Each entry is an adapter's module value (`ProviderModule`:
 * descriptor, production and sandbox ports, mappers, secret settings). Production code, the
 * contract (`@tracebridge/api`), the Connect widget and log redaction read this list; the sandbox
 * pairs each entry with its emulator (`Registry` of `@tracebridge/sandbox`).
 *
 * Adding a provider adds its folders and one line here and one in the sandbox's `Registry`
 * (`npm run new-provider -- provider_x` does both); nothing else names a provider.
 *
 * @since 0.1.0
 */
import type { HttpClient } from "@effect/platform"
import { ProviderA } from "@tracebridge/adapter-provider-a"
import { ProviderB } from "@tracebridge/adapter-provider-b"
// new-provider: imports
import type { ProviderName } from "@tracebridge/core"
import { ProviderModule } from "@tracebridge/core"
import type { Scope } from "effect"

/**
 * An installed provider's module value, as the catalog holds it.
 *
 * @since 0.1.0
 * @category models
 */
export type Entry = ProviderModule.ProviderModule<HttpClient.HttpClient | Scope.Scope>

/**
 * Every installed provider's module, in registration order.
 *
 * @since 0.1.0
 * @category catalog
 */
export const modules: ReadonlyArray<Entry> = [
  ProviderA.module,
  ProviderB.module
]

/**
 * A registration list that is not sound: a provider registered twice or ill described.
 *
 * @since 0.1.0
 * @category errors
 */
export class RegistrationError extends Error {
  constructor(readonly problems: ReadonlyArray<string>) {
    super(`the provider registration list is not sound:\n  ${problems.join("\n  ")}`)
    this.name = "RegistrationError"
  }
}

/**
 * A lookup over a list of modules, checked once: a list that is not sound throws a
 * {@link RegistrationError} at start-up, never at the first request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (list: ReadonlyArray<Entry>) => {
  const found = ProviderModule.problems(list)
  if (found.length > 0) throw new RegistrationError(found)
  const byName = new Map(list.map((m) => [m.descriptor.name, m]))
  return {
    modules: list,
    names: list.map((m) => m.descriptor.name) as ReadonlyArray<ProviderName.ProviderName>,
    /** The module of a name, or undefined when none is installed under it. */
    get: (name: string): Entry | undefined => byName.get(name)
  }
}

/**
 * A checked lookup of modules (see {@link make}).
 *
 * @since 0.1.0
 * @category models
 */
export type Lookup = ReturnType<typeof make>

/**
 * The installed providers' lookup.
 *
 * @since 0.1.0
 * @category catalog
 */
export const installed: Lookup = make(modules)

/**
 * An installed provider's module, or a clear error naming the ones that are.
 *
 * @since 0.1.0
 * @category catalog
 */
export const get = (name: string): Entry => {
  const found = installed.get(name)
  if (found === undefined) {
    throw new RegistrationError([`${name} is not an installed provider; installed: ${installed.names.join(", ")}`])
  }
  return found
}

/**
 * The environment variables holding every installed provider's secrets (a vendor key): what log
 * redaction hides by value.
 *
 * @since 0.1.0
 * @category catalog
 */
export const secretConfig: ReadonlyArray<string> = modules.flatMap((m) => m.secretConfig)

/**
 * The installed providers whose production port needs an integrator's vendor key, each with the
 * environment variable that holds it (`ProviderModule.vendorKeyConfig`).
 *
 * @since 0.1.0
 * @category catalog
 */
export const vendorKeyConfig: ReadonlyArray<{ readonly provider: string; readonly config: string }> = modules
  .flatMap((m) => m.vendorKeyConfig === undefined ? [] : [{ provider: m.descriptor.name, config: m.vendorKeyConfig }])
