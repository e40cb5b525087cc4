/**
 * The one registration list of installed providers (DECISIONS "Providers are modules", ADR 0010).
 * Adding a provider adds its folders and one line here (`npm run new-provider -- provider_x` does
 * both); nothing else in core, sandbox, connect or http names a provider. Every per-provider table
 * elsewhere is derived from this list.
 *
 * @since 0.1.0
 */
import type { ProviderName } from "@tracebridge/core"
import { ProviderModule } from "@tracebridge/core"
import { provider as providerA } from "./providers/provider-a/index.js"
import { provider as providerB } from "./providers/provider-b/index.js"
// new-provider: imports
import type { SandboxProvider } from "./SandboxProvider.js"
import { nameOf } from "./SandboxProvider.js"

/**
 * Every installed provider, in registration order.
 *
 * @since 0.1.0
 * @category registry
 */
export const providers: ReadonlyArray<SandboxProvider> = [
  providerA,
  providerB
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
 * What is wrong with a list of providers (empty when sound): `ProviderModule.problems` of their
 * modules.
 *
 * @since 0.1.0
 * @category registry
 */
export const problems = (list: ReadonlyArray<SandboxProvider>): ReadonlyArray<string> =>
  ProviderModule.problems(list.map((p) => p.module))

/**
 * A lookup over a list of providers, checked once: a list that is not sound throws a
 * {@link RegistrationError} at start-up, never at the first request.
 *
 * @since 0.1.0
 * @category registry
 */
export const make = (list: ReadonlyArray<SandboxProvider>) => {
  const found = problems(list)
  if (found.length > 0) throw new RegistrationError(found)
  const byName = new Map(list.map((p) => [nameOf(p), p]))
  return {
    providers: list,
    names: list.map(nameOf) as ReadonlyArray<ProviderName.ProviderName>,
    /** The provider of a name, or undefined when none is installed under it. */
    get: (name: string): SandboxProvider | undefined => byName.get(name)
  }
}

/**
 * A checked lookup of providers (see {@link make}).
 *
 * @since 0.1.0
 * @category models
 */
export type Lookup = ReturnType<typeof make>

/**
 * The installed providers' lookup.
 *
 * @since 0.1.0
 * @category registry
 */
export const installed = make(providers)

/**
 * An installed provider, or a clear error naming the ones that are.
 *
 * @since 0.1.0
 * @category registry
 */
export const get = (name: string): SandboxProvider => {
  const provider = installed.get(name)
  if (provider === undefined) {
    throw new RegistrationError([`${name} is not an installed provider; installed: ${installed.names.join(", ")}`])
  }
  return provider
}

/**
 * What `Generate.generate` needs of an installed provider: its descriptor and profile.
 *
 * @since 0.1.0
 * @category registry
 */
export const seedingOf = (name: string) => {
  const provider = get(name)
  return { descriptor: provider.module.descriptor, profile: provider.profile }
}
