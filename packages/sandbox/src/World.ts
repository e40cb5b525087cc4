/**
 * A sandbox world: one login's licensed operation, as core objects. Emulators serve it in each
 * provider's own wire format; writes and scenarios change it.
 *
 * A world is per login and provider: its ids follow that provider's conventions (so that what the
 * real adapter derives from the wire equals the world's records), and `metadata` carries the
 * provider fields the adapter keeps.
 *
 * @since 0.1.0
 */
import type {
  Facility,
  Harvest,
  Item,
  LabResult,
  Location,
  Package,
  Patient,
  Plant,
  ProviderName,
  Sale,
  SalesDelivery,
  Strain,
  Transfer
} from "@tracebridge/core"
import * as Slots from "./internal/slot.js"
import type { Profile } from "./Profile.js"
import type { key as profileKey } from "./Profile.js"
import type * as Roles from "./Role.js"

/**
 * What a facility is for (kept in `Role.ts`, which the profiles import too).
 *
 * @since 0.1.0
 * @category models
 */
export type Role = Roles.Role

/**
 * The kinds of hold a state system puts on a package (Metrc: an administrative hold, an
 * investigation, a recall; BioTrack: a status hold, a seizure). Each stops the package, and each
 * reads as `is_on_hold: true`.
 *
 * @since 0.1.0
 * @category models
 */
export type HoldKind = "administrative" | "investigation" | "recall"

/**
 * Every kind of hold.
 *
 * @since 0.1.0
 * @category constants
 */
export const holdKinds: ReadonlyArray<HoldKind> = ["administrative", "investigation", "recall"]

/**
 * One facility and everything it holds. Packages are stored without `lab_results` (they live in
 * `labResults`); {@link packageView} joins them.
 *
 * @since 0.1.0
 * @category models
 */
export interface FacilityData {
  readonly facility: Facility.Facility
  readonly role: Role
  packages: Array<Package.Package>
  /**
   * Packages that left the facility (received by another), as they were when they left: Metrc
   * lists them in the shipper's `/packages/v2/inactive`.
   */
  departedPackages: Array<Package.Package>
  plants: Array<Plant.Plant>
  harvests: Array<Harvest.Harvest>
  labResults: Array<LabResult.LabResult>
  sales: Array<Sale.Sale>
  salesDeliveries: Array<SalesDelivery.SalesDelivery>
  items: Array<Item.Item>
  strains: Array<Strain.Strain>
  locations: Array<Location.Location>
  patients: Array<Patient.Patient>
}

/**
 * A transfer between two facilities of the world (or from an outside licence). It is stored once
 * and seen from both ends: `facility_id` in {@link transfersOf} is the facility asking.
 *
 * @since 0.1.0
 * @category models
 */
export interface TransferData {
  transfer: Omit<Transfer.Transfer, "facility_id">
  /** Created through the provider_a template API (read back as a pending template). */
  readonly template: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface World {
  readonly provider: ProviderName.ProviderName
  readonly state: ProviderName.UsState
  readonly seed: string
  readonly login: string
  /** The instant the world is generated at (ISO 8601); nothing in it is later. */
  readonly referenceDate: string
  readonly facilities: Array<FacilityData>
  readonly transfers: Array<TransferData>
  /** When each object (by id) last changed, in epoch ms: the providers' lastModified/sessiontime. */
  readonly modified: Stamps
  /** Counters for new provider ids, so that writes mint ids that never collide. */
  readonly counters: { next: number }
  /** Each package's quantity when it was made (by id). */
  readonly original: Map<string, number>
  /**
   * The kind of each package's hold (by id) when it is not an administrative one: a package on
   * hold that is not here is on an administrative hold.
   */
  readonly holds: Map<string, HoldKind>
  /** Set by the `connection_login_required` scenario: the next provider call refuses the login. */
  loginRequired?: boolean
  /** What was drawn from a package into another (splits), in the source's unit. */
  readonly draws: Array<{ readonly source: string; readonly target: string; readonly quantity: number }>
  /** How its provider's ids and details look (a symbol key: not in JSON, not in its hash). */
  readonly [profileKey]: Profile
  /**
   * What an emulator keeps about this world beyond the records (see {@link slot}): a hidden key,
   * not enumerable, so not in JSON, equality or hashes; it goes with the world.
   */
  readonly [Slots.worldSlots]: Slots.Slots<World>
}

/**
 * A kind of value an emulator keeps per world (a session's pending lines, a derived roster),
 * made on first use and gone with the world when it is reset or regenerated.
 *
 * @since 0.1.0
 * @category models
 */
export type Slot<A> = Slots.Slot<World, A>

/**
 * A kind of per-world value and how to make its first one (compared by identity).
 *
 * @since 0.1.0
 * @category slots
 */
export const slot = <A>(name: string, make: (world: World) => A): Slot<A> => Slots.make(name, make)

/**
 * A world's value of a slot, made on first use.
 *
 * @since 0.1.0
 * @category slots
 */
export const slotOf = <A>(world: World, slot: Slot<A>): A => world[Slots.worldSlots].get(world, slot)

/**
 * When each object (by id) last changed, in epoch ms, with a `revision` that every change raises:
 * the emulators keep indexes of a list's times and rebuild them when it moves.
 *
 * @since 0.1.0
 * @category models
 */
export class Stamps extends Map<string, number> {
  revision = 0

  override set(id: string, at: number): this {
    // `Map`'s constructor may call `set` before the field above is in place.
    this.revision = (this.revision ?? 0) + 1
    return super.set(id, at)
  }

  override delete(id: string): boolean {
    this.revision++
    return super.delete(id)
  }

  override clear(): void {
    this.revision++
    super.clear()
  }
}

/**
 * The facility data of a licence, if the world has it.
 *
 * @since 0.1.0
 * @category getters
 */
export const facilityByLicense = (world: World, license: string): FacilityData | undefined =>
  world.facilities.find((f) => f.facility.license_number === license)

/**
 * A package with its lab results joined, as the adapters return it.
 *
 * @since 0.1.0
 * @category getters
 */
export const packageView = (data: FacilityData, pkg: Package.Package): Package.Package => ({
  ...pkg,
  lab_results: data.labResults.filter((r) => r.package_id === pkg.id)
})

/**
 * The transfers a facility sees (as shipper or recipient), with its own `facility_id`.
 *
 * @since 0.1.0
 * @category getters
 */
export const transfersOf = (
  world: World,
  data: FacilityData
): Array<
  { readonly transfer: Transfer.Transfer; readonly direction: "incoming" | "outgoing"; readonly data: TransferData }
> =>
  world.transfers.flatMap(
    (
      stored
    ): Array<
      { readonly transfer: Transfer.Transfer; readonly direction: "incoming" | "outgoing"; readonly data: TransferData }
    > => {
      const license = data.facility.license_number
      const transfer = { ...stored.transfer, facility_id: data.facility.id } as Transfer.Transfer
      if (stored.transfer.shipper_facility === license) {
        return [{ transfer, direction: "outgoing" as const, data: stored }]
      }
      if (stored.transfer.recipient_facility === license) {
        return [{ transfer, direction: "incoming" as const, data: stored }]
      }
      return []
    }
  )
