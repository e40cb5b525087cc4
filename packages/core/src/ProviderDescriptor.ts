/**
 * A provider described as data, before any code (the role of Nango's providers.yaml): who it is,
 * what login a user enters, where it lives per state and environment, how it pages, how fast it
 * may be called, and what each state supports.
 *
 * @since 0.1.0
 */
import { Effect, Option, Schema } from "effect"
import type { Capabilities } from "./Capabilities.js"
import { UnsupportedState } from "./ProviderError.js"
import type { Environment, ProviderName, UsState } from "./ProviderName.js"

/**
 * One field of the login form the Connect widget shows for this provider.
 *
 * @since 0.1.0
 * @category models
 */
export interface CredentialField {
  readonly name: string
  readonly label: string
  /** Masked in the form; never logged or returned. */
  readonly secret: boolean
  readonly description?: string
}

/**
 * The base URLs of one state.
 *
 * @since 0.1.0
 * @category models
 */
export interface BaseUrls {
  readonly sandbox: string
  readonly production: string
}

/**
 * How fast the provider may be called; adapters pace themselves to it.
 *
 * @since 0.1.0
 * @category models
 */
export interface RateLimitPolicy {
  /** Sustained requests per second per facility. */
  readonly requestsPerSecond: number
  /** Requests that may go at once per facility. */
  readonly concurrency: number
  /** Whether the provider sends `Retry-After` on its 429s. */
  readonly retryAfterHeader: boolean
  /** Free text on where the numbers come from. */
  readonly notes?: string
}

/**
 * A write a provider can take (sandbox connections only).
 *
 * @since 0.1.0
 * @category models
 */
export type WriteName = "split_package" | "record_lab_result" | "create_transfer"

/**
 * @since 0.1.0
 * @category models
 */
export interface ProviderDescriptor {
  readonly name: ProviderName
  readonly displayName: string
  /** The login fields a user enters, in form order. */
  readonly credentialFields: ReadonlyArray<CredentialField>
  /** Decodes the entered login; failures are shown to the user. */
  readonly credentials: Schema.Schema<any, Readonly<Record<string, string>>>
  /** Base URLs per served state. */
  readonly baseUrls: Partial<Record<UsState, BaseUrls>>
  /** The provider's own page size limit, or `null` when it hands over whole tables. */
  readonly providerPageSize: number | null
  readonly rateLimit: RateLimitPolicy
  /** Capabilities per served state: the served states are its keys. */
  readonly capabilities: Partial<Record<UsState, Capabilities>>
  /** The writes the adapter implements; the conformance kit checks each. */
  readonly writes: ReadonlyArray<WriteName>
}

/**
 * The states the provider serves, sorted.
 *
 * @since 0.1.0
 * @category getters
 */
export const states = (d: ProviderDescriptor): ReadonlyArray<UsState> =>
  (Object.keys(d.capabilities) as Array<UsState>).sort()

/**
 * The capabilities of a state, or `UnsupportedState`.
 *
 * @since 0.1.0
 * @category getters
 */
export const capabilitiesFor = (d: ProviderDescriptor, state: string): Effect.Effect<Capabilities, UnsupportedState> =>
  Option.match(Option.fromNullable(d.capabilities[state as UsState]), {
    onNone: () =>
      Effect.fail(
        new UnsupportedState({
          provider: d.name,
          state,
          message: `${d.displayName} does not serve ${state}; it serves ${states(d).join(", ")}`
        })
      ),
    onSome: Effect.succeed
  })

/**
 * The base URL for a state and environment (an override wins), or `UnsupportedState`.
 *
 * @since 0.1.0
 * @category getters
 */
export const baseUrl = (
  d: ProviderDescriptor,
  state: string,
  environment: Environment,
  override?: string
): Effect.Effect<string, UnsupportedState> => {
  if (override !== undefined) return Effect.succeed(override)
  const urls = d.baseUrls[state as UsState]
  return urls === undefined
    ? Effect.fail(
      new UnsupportedState({ provider: d.name, state, message: `${d.displayName} has no host for ${state}` })
    )
    : Effect.succeed(urls[environment])
}
