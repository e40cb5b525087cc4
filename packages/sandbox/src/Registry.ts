/**
 * The sandbox's registration list: each provider's sandbox part (emulator, test logins, world
 * profile), paired by name with its entry of the provider catalog (`Catalog` of
 * `@tracebridge/providers`, the one list of provider modules; ADR 0010, ADR 0022). Adding a
 * provider adds its folders, one line in the catalog and one line here
 * (`npm run new-provider -- provider_x` does all three); nothing else in core, sandbox, connect or
 * http names a provider. Every per-provider table of the sandbox is derived from this list.
 *
 * @since 0.1.0
 */
import type { ProviderName } from "@tracebridge/core"
import { ProviderModule } from "@tracebridge/core"
import { Catalog } from "@tracebridge/providers"
import { provider as providerA } from "./providers/provider-a/index.js"
import { provider as providerB } from "./providers/provider-b/index.js"
// new-provider: imports
import type { SandboxPart, SandboxProvider } from "./SandboxProvider.js"
import { nameOf } from "./SandboxProvider.js"

/**
 * Every provider's sandbox part, in registration order.
 *
 * @since 0.1.0
 * @category registry
 */
export const parts: ReadonlyArray<SandboxPart> = [
  providerA,
  providerB
]

/**
 * A registration list that is not sound: a provider registered twice or ill described.
 *
 * @since 0.1.0
 * @category errors
 */
export class RegistrationError extends Catalog.RegistrationError {}

/**
 * Each catalog entry paired with its sandbox part, in the catalog's order: a catalog entry with no
 * sandbox part, or a part with no catalog entry (or two parts of one name), throws a
 * {@link RegistrationError} at start-up.
 *
 * @since 0.1.0
 * @category registry
 */
export const pair = (
  modules: ReadonlyArray<Catalog.Entry>,
  sandboxParts: ReadonlyArray<SandboxPart>
): ReadonlyArray<SandboxProvider> => {
  const found: Array<string> = []
  const byName = new Map<string, SandboxPart>()
  for (const part of sandboxParts) {
    if (byName.has(part.name)) found.push(`${part.name} has two sandbox parts`)
    byName.set(part.name, part)
  }
  const names = new Set(modules.map((m) => m.descriptor.name))
  for (const part of sandboxParts) {
    if (!names.has(part.name)) found.push(`${part.name} has a sandbox part but no catalog entry`)
  }
  const paired = modules.flatMap((module): ReadonlyArray<SandboxProvider> => {
    const part = byName.get(module.descriptor.name)
    if (part === undefined) {
      found.push(`${module.descriptor.name} is in the catalog but has no sandbox part (no emulator)`)
      return []
    }
    return [{ ...part, module }]
  })
  if (found.length > 0) throw new RegistrationError(found)
  return paired
}

/**
 * Every installed provider (the catalog's, each with its sandbox part), in registration order.
 *
 * @since 0.1.0
 * @category registry
 */
export const providers: ReadonlyArray<SandboxProvider> = pair(Catalog.modules, parts)

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
