/**
 * What a port call needs to reach a provider on behalf of one connection: the provider, the
 * state, sandbox or production, and the end user's decrypted login (kept `Redacted`, so it never
 * prints). The port keeps no per-connection state of its own: one adapter serves every connection.
 *
 * @since 0.1.0
 */
import { Redacted } from "effect"
import type { ProviderName, UsState } from "./ProviderName.js"
import type { Environment } from "./ProviderName.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Session {
  /** A stable key for the connection (the connection id), for adapter caches such as a login session. */
  readonly key: string
  readonly provider: ProviderName
  readonly state: UsState
  readonly environment: Environment
  /** The login the end user entered, as the provider descriptor's credential fields. */
  readonly credentials: Redacted.Redacted<Readonly<Record<string, string>>>
  /** Overrides the descriptor's base URL (tests, a standalone emulator). */
  readonly baseUrl?: string | undefined
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly key: string
  readonly provider: ProviderName
  readonly state: UsState
  readonly environment: Environment
  readonly credentials: Readonly<Record<string, string>>
  readonly baseUrl?: string | undefined
}): Session => ({
  key: options.key,
  provider: options.provider,
  state: options.state,
  environment: options.environment,
  credentials: Redacted.make(options.credentials),
  baseUrl: options.baseUrl
})
