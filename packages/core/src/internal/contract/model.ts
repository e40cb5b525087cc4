/**
 * The kit's models: what a fixture supplies, what a check is, what breaks one, and how each error
 * kind is covered. `ProviderContract` re-exports every one of them.
 */
import { Context, type Effect, Schema } from "effect"
import type { WriteName } from "../../ProviderDescriptor.js"
import type { ProviderError } from "../../ProviderError.js"
import type { ProviderPort } from "../../ProviderPort.js"
import type * as Resource from "../../Resource.js"
import type { Session } from "../../Session.js"

/**
 * A provider failure the fixture can cause, and the error it must become.
 *
 * @since 0.1.0
 * @category models
 */
export interface FailureCase {
  readonly name: string
  /** Makes the next provider call(s) fail (e.g. an msw one-shot handler, an emulator fault). */
  readonly arrange: Effect.Effect<void>
  /** The tag the port must fail with. */
  readonly expected: ProviderError["_tag"]
  /**
   * The call that meets the failure; default: the first page of packages. It may also undo what
   * `arrange` did (e.g. `Effect.ensuring` a fault switch off) or drive a `TestClock` for a timeout.
   */
  readonly call?: (port: ProviderPort["Type"], fixture: Fixture) => Effect.Effect<unknown, ProviderError>
}

/**
 * A filter of a resource, as `<resource>.<filter>`, e.g. `packages.updated_since`.
 *
 * @since 0.1.0
 * @category models
 */
export type FilterKey = `${Resource.Name}.${string}`

/**
 * What the adapter's test supplies.
 *
 * @since 0.1.0
 * @category models
 */
export interface Fixture {
  /** A working sandbox session for the state under test. */
  readonly session: Session
  /** A login the provider refuses. */
  readonly invalidCredentials: Readonly<Record<string, string>>
  /** A facility of the session that holds at least two objects of every enabled resource. */
  readonly facilityId: string
  /**
   * Another facility per resource, where the main one cannot hold it (a cultivator has no sales;
   * a dispensary no harvests). Writes always use `facilityId`.
   */
  readonly facilityFor?: Partial<Record<Resource.Name, string>>
  /**
   * The facility a write is made at, where `facilityId` cannot make it (the descriptor's
   * `writeNeeds`: a lab result is recorded by a testing laboratory, on a package it holds). A
   * sandbox lab result elsewhere is recorded by the world's lab, which the kit checks at a
   * facility without the capability.
   */
  readonly writeFacilityFor?: Partial<Record<WriteName, string>>
  /**
   * Licence numbers of licensees outside the session that the state system knows, to ship
   * transfers to besides the session's other facilities. Declaring them says the system knows no
   * other: the kit then checks that a transfer to a licence it does not know is refused.
   */
  readonly licensees?: ReadonlyArray<string>
  /** Provider failures and the error each must become: at least one per {@link providerSideKinds}. */
  readonly failures: ReadonlyArray<FailureCase>
  /**
   * When a listed object last changed in the provider's data (epoch ms or an ISO date-time), as the
   * provider's own change marker says (Metrc's `LastModified`, BioTrack's `sessiontime`): core
   * objects carry no modification time, so the `updated_since` checks read it here. `null` for an
   * object with no change marker (no `updated_since` returns it); `undefined` when the fixture
   * cannot tell (the check fails, naming the object).
   */
  // why `any`: a fixture reads the provider's own fields of whichever resource it is asked about
  // (`item.metadata?.updated`, a lab result's `package_id`); the union of every core object would
  // make each fixture narrow by resource first, and would break the fixtures written against it.
  readonly updatedAt?: (resource: Resource.Name, item: any) => number | string | null | undefined
  /**
   * Coverage the fixture cannot give, each with its reason, so that what is missing stays visible
   * in the fixture rather than silently untested. A declaration that is not needed (the kind is
   * arranged; the data exercises the filter) fails its check, so declarations do not go stale.
   */
  readonly notApplicable?: {
    /** Provider-side error kinds ({@link providerSideKinds}) the fixture cannot arrange. */
    readonly failures?: Partial<Record<ProviderError["_tag"], string>>
    /** Filters the fixture's data cannot tell from no filter (e.g. every package is off hold). */
    readonly filters?: Partial<Record<FilterKey, string>>
  }
}

/**
 * @since 0.1.0
 * @category tags
 */
export class ContractFixture extends Context.Tag("@tracebridge/core/ProviderContract/ContractFixture")<
  ContractFixture,
  Fixture
>() {}

/**
 * A broken promise of the port.
 *
 * @since 0.1.0
 * @category errors
 */
export class ContractViolation extends Schema.TaggedError<ContractViolation>(
  "@tracebridge/core/ProviderContract/ContractViolation"
)("ContractViolation", { check: Schema.String, message: Schema.String }) {}

/**
 * One check.
 *
 * @since 0.1.0
 * @category models
 */
export interface Check {
  readonly name: string
  readonly run: Effect.Effect<void, ContractViolation | ProviderError, ProviderPort | ContractFixture>
}

/**
 * The error kinds only the provider can cause: the fixture arranges each (a `FailureCase`), or
 * declares it not applicable with a reason.
 *
 * @since 0.1.0
 * @category constants
 */
export const providerSideKinds: ReadonlyArray<ProviderError["_tag"]> = [
  "ProviderUnavailable",
  "ProviderTimeout",
  "ProviderRateLimited",
  "ProviderInvalidResponse",
  "ProviderLoginRequired",
  "ProviderPermissionDenied",
  "ProviderRejected"
]

/**
 * How the kit covers each error kind of the family: `fixture` (arranged by the fixture, one check
 * per kind), `kit` (provoked by the kit's own checks), or `none` (no port call can cause it).
 *
 * @since 0.1.0
 * @category constants
 */
export const errorCoverage: {
  readonly [K in ProviderError["_tag"]]: { readonly by: "fixture" | "kit" | "none"; readonly how: string }
} = {
  ProviderUnavailable: { by: "fixture", how: "the system down or answering 5xx past the adapter's retries" },
  ProviderTimeout: { by: "fixture", how: "the system not answering within the adapter's deadline" },
  ProviderRateLimited: { by: "fixture", how: "429s past the adapter's retries" },
  ProviderInvalidResponse: { by: "fixture", how: "an answer off the provider's wire schema" },
  ProviderLoginRequired: {
    by: "fixture",
    how: "a call refused for the login (an expired session, a locked account); the kit also checks a refused login"
  },
  ProviderPermissionDenied: { by: "fixture", how: "a login that may not read this facility or resource" },
  ProviderRejected: { by: "fixture", how: "the system refusing a request on its merits (a write's validation)" },
  ResourceNotFound: { by: "kit", how: "unknown and malformed ids of every claimed resource and of facilities" },
  CapabilityNotEnabled: { by: "kit", how: "every resource, filter and write the descriptor does not claim" },
  UnsupportedState: { by: "kit", how: "a session for a state the descriptor does not serve" },
  InvalidInput: { by: "kit", how: "a session of another provider; an invalid command for each declared write" },
  InsufficientQuantity: { by: "kit", how: "a split beyond its source (when split_package is declared)" },
  SandboxOnly: { by: "kit", how: "a write with a production session (when any write is declared)" },
  PackageInTransfer: {
    by: "kit",
    how: "a second transfer of a package while the first is pending (when create_transfer is declared)"
  },
  InvalidStateTransition: {
    by: "none",
    how: "no port call moves a state; the sandbox's scenarios raise it, and the sandbox's tests check them"
  }
}
