/**
 * A provider described as data, before any code (the role of Nango's providers.yaml): who it is,
 * what login a user enters, where it lives per state and environment, how it pages, how fast it
 * may be called, and what each state supports.
 *
 * @since 0.1.0
 */
import type { Schema } from "effect"
import { Effect, Option } from "effect"
import type { Capabilities } from "./Capabilities.js"
import type { CapabilityTag } from "./Facility.js"
import { UnsupportedState } from "./ProviderError.js"
import type { Environment, ProviderName, UsState } from "./ProviderName.js"
import { isProviderName } from "./ProviderName.js"

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
 * One lab-test panel a state system names by code (BioTrack's QA `type`): the core category
 * (`LabResult.categories`) and unit of its values, and whether the system judges it (a failed
 * sample fails on a judged panel; potency and moisture are reported, not judged).
 *
 * @since 0.1.0
 * @category models
 */
export interface LabPanel {
  readonly category: string
  readonly unit: string
  readonly judged: boolean
}

/**
 * What is true of a provider's state system that both its adapter and its emulator read: facts,
 * never wire codecs (each side keeps its own). One table per provider, in its descriptor, so the
 * two cannot drift apart.
 *
 * @since 0.1.0
 * @category models
 */
export interface Facts {
  /**
   * The IANA time zone of each served state, exactly the served states: a system that writes
   * local times without an offset writes them in it.
   */
  readonly timeZones: Partial<Record<UsState, string>>
  /** The lab-test panels by the system's code, where it names tests by code rather than by name. */
  readonly labPanels?: Readonly<Record<number, LabPanel>>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ProviderDescriptor {
  readonly name: ProviderName
  readonly displayName: string
  /** The login fields a user enters, in form order. */
  readonly credentialFields: ReadonlyArray<CredentialField>
  /**
   * How a login is keyed: the credential fields that together name one account (a user key; a
   * company and a username). Two logins equal on these fields are the same account; the other
   * fields (a password) are secrets that may change.
   */
  readonly loginKey: ReadonlyArray<string>
  /** The licence types the system issues (the `license_type` of its facilities), per state when they differ. */
  readonly licenseTypes: ReadonlyArray<string> | Partial<Record<UsState, ReadonlyArray<string>>>
  /** Decodes the entered login; failures are shown to the user. */
  readonly credentials: Schema.Schema<any, any>
  /** Base URLs per served state. */
  readonly baseUrls: Partial<Record<UsState, BaseUrls>>
  /** The provider's own page size limit, or `null` when it hands over whole tables. */
  readonly providerPageSize: number | null
  /**
   * How the managed sync walks the provider's history: in windows of this many hours of
   * modification time (Metrc's 24 h `lastModified` windows), each read with `ReadWindow.Until` set
   * to its end. Absent: the lists are read whole (BioTrack's tables), in one window.
   */
  readonly syncWindowHours?: number
  readonly rateLimit: RateLimitPolicy
  /** Capabilities per served state: the served states are its keys. */
  readonly capabilities: Partial<Record<UsState, Capabilities>>
  /** The writes the adapter implements; the conformance kit checks each. */
  readonly writes: ReadonlyArray<WriteName>
  /**
   * The facility capability tag (`Facility.capabilities`) a write needs, where the state system
   * lets only some licence types make it (a lab result needs a testing laboratory: `labs`). A write
   * at a facility without the tag is refused with `CapabilityNotEnabled` before any upstream write.
   */
  readonly writeNeeds?: Partial<Record<WriteName, CapabilityTag>>
  /** The provider's facts (time zones per state, lab-test vocabulary), read by its adapter and its emulator. */
  readonly facts?: Facts
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
 * The licence types of a state.
 *
 * @since 0.1.0
 * @category getters
 */
export const licenseTypesFor = (d: ProviderDescriptor, state: UsState): ReadonlyArray<string> =>
  Array.isArray(d.licenseTypes)
    ? d.licenseTypes
    : (d.licenseTypes as Partial<Record<UsState, ReadonlyArray<string>>>)[state] ?? []

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

/**
 * What is wrong with a descriptor, if anything: every served state needs base URLs, the
 * credential schema must read exactly the declared fields, the limits must make sense, and the
 * facts, when given, must give a time zone for exactly the served states.
 * The conformance kit runs this first.
 *
 * @since 0.1.0
 * @category validation
 */
export const problems = (d: ProviderDescriptor): ReadonlyArray<string> => {
  const out: Array<string> = []
  const served = states(d)
  if (!isProviderName(d.name)) out.push(`${d.name} is not a provider name (provider_ and lower-case letters or digits)`)
  if (served.length === 0) out.push("serves no state")
  for (const state of served) {
    const urls = d.baseUrls[state]
    if (urls === undefined) out.push(`${state} has capabilities but no base URLs`)
    else {
      for (const env of ["sandbox", "production"] as const) {
        if (!/^https?:\/\/[^\s]+$/.test(urls[env])) out.push(`${state} ${env} base URL is not an http(s) URL`)
      }
    }
  }
  for (const state of Object.keys(d.baseUrls)) {
    if (d.capabilities[state as UsState] === undefined) out.push(`${state} has base URLs but no capabilities`)
  }
  if (d.credentialFields.length === 0) out.push("declares no credential field")
  const fieldNames = new Set(d.credentialFields.map((f) => f.name))
  if (d.loginKey.length === 0) out.push("loginKey names no credential field")
  for (const key of d.loginKey) {
    if (!fieldNames.has(key)) out.push(`loginKey names ${key}, which is not a credential field`)
  }
  for (const state of served) {
    if (licenseTypesFor(d, state).length === 0) out.push(`${state} has no licence types`)
  }
  const ast = d.credentials.ast
  const schemaFields = ast._tag === "TypeLiteral" ? ast.propertySignatures.map((p) => String(p.name)).sort() : undefined
  const declared = d.credentialFields.map((f) => f.name).sort()
  if (schemaFields !== undefined && schemaFields.join(",") !== declared.join(",")) {
    out.push(`credential schema reads [${schemaFields}] but the form declares [${declared}]`)
  }
  if (d.providerPageSize !== null && !(Number.isInteger(d.providerPageSize) && d.providerPageSize > 0)) {
    out.push("providerPageSize must be a positive whole number or null")
  }
  if (d.syncWindowHours !== undefined && !(Number.isInteger(d.syncWindowHours) && d.syncWindowHours > 0)) {
    out.push("syncWindowHours must be a positive whole number when set")
  }
  if (!(d.rateLimit.requestsPerSecond > 0) || !(d.rateLimit.concurrency >= 1)) out.push("rate limit must be positive")
  if (d.facts !== undefined) {
    for (const state of served) {
      if (d.facts.timeZones[state] === undefined) out.push(`${state} is served but its facts give no time zone`)
    }
    for (const state of Object.keys(d.facts.timeZones)) {
      if (d.capabilities[state as UsState] === undefined) {
        out.push(`the facts give a time zone for ${state}, which is not served`)
      }
    }
  }
  return out
}
