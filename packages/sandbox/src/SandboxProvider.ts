/**
 * A provider's sandbox part: what the sandbox needs to emulate one state system over seeded
 * worlds. The sandbox's `Registry` pairs it, by name, with the adapter's module value of the
 * provider catalog (`Catalog` of `@tracebridge/providers`) into a {@link SandboxProvider}. Each
 * part lives in its provider's own folder, `packages/sandbox/src/providers/<folder>/` (ADR 0010,
 * ADR 0022).
 *
 * @since 0.1.0
 */
import type { HttpClient } from "@effect/platform"
import type { ProviderModule, ProviderName } from "@tracebridge/core"
import type { Scope } from "effect"
import type { Logins } from "./Logins.js"
import type { Profile } from "./Profile.js"
import type { Sandbox } from "./Sandbox.js"

/**
 * An emulator: answers one request to the provider's wire API for a state, from the sandbox's
 * worlds. `path` is what follows `/<provider>/<STATE>` in the URL.
 *
 * @since 0.1.0
 * @category models
 */
export type Emulator = (
  sandbox: Sandbox,
  state: ProviderName.UsState,
  path: string,
  request: Request
) => Promise<Response>

/**
 * What a provider's sandbox folder exports: its emulator, test logins and world profile, under
 * the provider's name (the catalog entry it belongs to).
 *
 * @since 0.1.0
 * @category models
 */
export interface SandboxPart {
  /** The provider's name: the catalog entry (`Catalog` of `@tracebridge/providers`) it emulates. */
  readonly name: ProviderName.ProviderName
  /** The provider's wire API over the sandbox's worlds. */
  readonly emulator: Emulator
  /** The documented test logins and how the emulator checks them. */
  readonly logins: Logins
  /** How its worlds' identifiers and details look. */
  readonly profile: Profile
  /**
   * For the standalone banner and `tracebridge-sandbox --help`: what the API is, an example path
   * under a state's base URL, the test logins in a line, and how a client authenticates (how the
   * entered login maps onto the wire, e.g. HTTP Basic's username and password).
   */
  readonly banner: {
    readonly style: string
    readonly examplePath: string
    readonly loginHint: string
    readonly auth?: string
  }
}

/**
 * A catalog entry paired with its sandbox part: one entry of the sandbox's `Registry`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SandboxProvider extends SandboxPart {
  /** The adapter's module value (the catalog's entry): descriptor, ports and mappers. */
  readonly module: ProviderModule.ProviderModule<HttpClient.HttpClient | Scope.Scope>
}

/**
 * The provider's name (its descriptor's).
 *
 * @since 0.1.0
 * @category getters
 */
export const nameOf = (provider: SandboxProvider): ProviderName.ProviderName => provider.module.descriptor.name
