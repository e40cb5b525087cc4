/**
 * How a provider's world is seeded: the shape of the identifiers and provider-only details its
 * records carry, so that a sandbox world holds exactly what that provider's adapter derives from
 * its wire. The world engine (`Generate`, `Writes`, `Scenario`) is shared by every provider and
 * asks the world's profile wherever providers differ; it never branches on a provider's name.
 *
 * A provider's sandbox part (`SandboxProvider`) carries its profile; the one registration list
 * (`Registry`) installs it.
 *
 * @since 0.1.0
 */
import type { Facility, LabResult, Package, Transfer } from "@tracebridge/core"
import type { Role } from "./Role.js"

/**
 * What a facility of the world looks like beyond what every provider has.
 *
 * @since 0.1.0
 * @category models
 */
export type FacilityDetails = Pick<Facility.Facility, "display_name" | "alias" | "address" | "city" | "zip">

/**
 * A draw of fake text for a facility (a seeded faker, drawn in call order).
 *
 * @since 0.1.0
 * @category models
 */
export interface FacilityFaker {
  readonly streetAddress: () => string
  readonly city: () => string
  readonly zipCode: () => string
}

/**
 * What a new package's provider-only metadata is made from.
 *
 * @since 0.1.0
 * @category models
 */
export interface PackageMetadataInput {
  readonly quantity: number
  /** The unit abbreviation the provider shows (`g`, `ea`). */
  readonly unitAbbreviation: string
  readonly sourceHarvestNames: ReadonlyArray<string>
  readonly at: number
  readonly providerItemId: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Profile {
  /** The licence number of the `f`-th facility of a world. */
  readonly license: (f: number, seed: number) => string
  /** The tag (label, barcode) of the `n`-th package or plant of facility `f`. */
  readonly tag: (kind: "package" | "plant", f: number, n: number) => string
  /** A numeric provider id of the `n`-th object of a kind in facility `f`. */
  readonly numeric: (kind: string, f: number, n: number) => number
  /** The provider-only details of a facility; draws from `faker` only what it shows, in a fixed order. */
  readonly facilityDetails: (company: string, role: Role, faker: FacilityFaker) => FacilityDetails
  /** A plant's provider id and plant batch, from its tag and number. */
  readonly plantIds: (tag: string, n: number) => { readonly providerId: string; readonly plantBatchId: string | null }
  /** A package's provider id, from its tag and its numeric id. */
  readonly packageId: (tag: string, numericId: number) => string
  /** The metadata of a package made now (`{}` for a provider that keeps none). */
  readonly packageMetadata: (input: PackageMetadataInput) => Package.Package["metadata"]
  /** The metadata of a package after a change at `at` (a last-modified stamp, or unchanged). */
  readonly touchMetadata: (metadata: Package.Package["metadata"], at: number) => Package.Package["metadata"]
  /** A lab result's provider id and result id, from the tested package, the result number and a counter. */
  readonly labResultIds: (
    tested: Package.Package,
    resultNo: number,
    n: number
  ) => { readonly providerId: string; readonly providerResultId: LabResult.LabResult["provider_result_id"] }
  /** A transfer's provider id and manifest number (`template`: created through a template API). */
  readonly transferIds: (
    n: number,
    numeric: number,
    template: boolean
  ) => { readonly providerId: string; readonly manifest: Transfer.Transfer["manifest_number"] }
  /** Whether sales carry discounts in the provider's read model. */
  readonly discounts: boolean
  /** The category and unit a lab test name gets. */
  readonly classifyLabTest: (testName: string) => { readonly category: string; readonly unit: string | null }
  /**
   * How a testing sample package shows in the provider's metadata (Metrc's `IsTestingSample`), for
   * a provider whose samples are packages; absent when samples are not packages (BioTrack's QA
   * samples are rows of their own).
   */
  readonly testingSample?: {
    readonly mark: (metadata: Package.Package["metadata"]) => Package.Package["metadata"]
    readonly is: (metadata: Package.Package["metadata"]) => boolean
  }
}

/**
 * Where a world keeps its profile: a symbol key, so that it is carried by spreads and left out of
 * JSON (a world's hash and its change log never see it).
 *
 * @since 0.1.0
 * @category symbols
 */
export const key: unique symbol = Symbol.for("@tracebridge/sandbox/Profile")

/**
 * The profile of a world.
 *
 * @since 0.1.0
 * @category getters
 */
export const of = (world: { readonly [key]: Profile }): Profile => world[key]

/** The leading digit of each kind's numeric ids. */
const kinds: Record<string, number> = {
  package: 1,
  plant: 2,
  harvest: 3,
  lab: 4,
  transfer: 5,
  sale: 6,
  delivery: 7,
  item: 8,
  strain: 1,
  location: 2,
  patient: 3
}

/**
 * The leading digit a kind's numeric ids share (9 for a kind without one).
 *
 * @since 0.1.0
 * @category helpers
 */
export const kindNumber = (kind: string): number => kinds[kind] ?? 9

/**
 * `n` in `width` digits, zero-padded.
 *
 * @since 0.1.0
 * @category helpers
 */
export const pad = (n: number, width: number): string => String(n).padStart(width, "0")

/**
 * A formatter remembered by its argument: a large world has many packages but few distinct
 * instants, so each string is built once.
 *
 * @since 0.1.0
 * @category helpers
 */
export const memo = (format: (ms: number) => string): (ms: number) => string => {
  const seen = new Map<number, string>()
  return (ms) => {
    let text = seen.get(ms)
    if (text === undefined) {
      if (seen.size > 10_000) seen.clear()
      text = format(ms)
      seen.set(ms, text)
    }
    return text
  }
}
