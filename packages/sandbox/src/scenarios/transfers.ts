/**
 * The transfer scenarios: a transfer arriving (`transfer_arrived`, which creates an incoming one
 * from another licensee when none is on its way) and completing (`transfer_completed`: received,
 * with its packages moved to the recipient, or rejected). Each fires its `transfer.*` change.
 *
 * @since 0.1.0
 */
import type { Transfer } from "@tracebridge/core"
import type { WebhookEvent } from "@tracebridge/core"
import { Ids, ProviderError, Transitions } from "@tracebridge/core"
import { Either, Schema } from "effect"
import * as Profile from "../Profile.js"
import type { World } from "../World.js"
import { facilityByLicense } from "../World.js"
import type { Failure } from "./common.js"
import type { Done } from "./common.js"
import { define, exhausted, fail, fire, iso, transition } from "./common.js"

const stored = (world: World, id: string | undefined, pick: (t: Transfer.Transfer) => boolean) =>
  world.transfers.find((s) =>
    id === undefined
      ? pick({ ...s.transfer, facility_id: "" as Transfer.Transfer["facility_id"] }) &&
        facilityByLicense(world, s.transfer.recipient_facility) !== undefined
      : s.transfer.id === id
  )

const updateTransfer = (world: World, id: string, patch: Partial<Transfer.Transfer>, at: number) => {
  for (const s of world.transfers) if (s.transfer.id === id) s.transfer = { ...s.transfer, ...patch }
  world.modified.set(id, Math.floor(at / 1000) * 1000)
}

/** The `transfer.*` change about a transfer of the world, for the facility of the world it concerns. */
const transferChange = (
  world: World,
  type: "transfer.arrived" | "transfer.completed",
  id: string
): WebhookEvent.Change => {
  const s = world.transfers.find((t) => t.transfer.id === id)!
  // the facility of the world the event is about: the recipient, or, for a transfer to another
  // licensee, the shipper (issue #30: it once crashed on a recipient outside the world)
  const recipient = facilityByLicense(world, s.transfer.recipient_facility) ??
    facilityByLicense(world, s.transfer.shipper_facility)!
  const transfer: Transfer.Transfer = { ...s.transfer, facility_id: recipient.facility.id }
  return { type, data: { id: transfer.id, facility_id: recipient.facility.id, transfer } }
}

const moveReceived = (world: World, transfer: Omit<Transfer.Transfer, "facility_id">, at: number) => {
  const from = facilityByLicense(world, transfer.shipper_facility)
  const to = facilityByLicense(world, transfer.recipient_facility)
  if (from === undefined) return
  for (const line of transfer.packages) {
    const pkg = from.packages.find((p) => p.id === line.package_id)
    if (pkg === undefined) continue
    from.packages = from.packages.filter((p) => p.id !== pkg.id)
    from.departedPackages = [...from.departedPackages.filter((p) => p.id !== pkg.id), pkg]
    // received by another licensee: the package has left the world (issue #30)
    if (to === undefined) {
      from.labResults = from.labResults.filter((r) => r.package_id !== pkg.id)
      world.modified.set(pkg.id, Math.floor(at / 1000) * 1000)
      continue
    }
    to.packages.push({ ...pkg, facility_id: to.facility.id })
    to.departedPackages = to.departedPackages.filter((p) => p.id !== pkg.id)
    const results = from.labResults.filter((r) => r.package_id === pkg.id)
    from.labResults = from.labResults.filter((r) => r.package_id !== pkg.id)
    to.labResults.push(...results.map((r) => ({ ...r, facility_id: to.facility.id })))
    world.modified.set(pkg.id, Math.floor(at / 1000) * 1000)
  }
}

/** An incoming transfer created from an outside licence, arrived now. */
const created = (world: World, at: number, facilityId: string | undefined): Either.Either<Done, Failure> => {
  const recipient = facilityId === undefined
    ? world.facilities.find((d) => d.role === "retail") ?? world.facilities[0]!
    : world.facilities.find((d) => d.facility.id === facilityId)
  if (recipient === undefined) return fail(ProviderError.ResourceNotFound.of("facility", facilityId ?? ""))
  const n = world.counters.next++
  const profile = Profile.of(world)
  const { manifest, providerId } = profile.transferIds(n, profile.numeric("transfer", 0, n), false)
  const transfer: Omit<Transfer.Transfer, "facility_id"> = {
    id: Ids.make("transfer", world.provider, providerId),
    manifest_number: manifest,
    transfer_type: "Transfer",
    shipper_facility: profile.license(8, n),
    recipient_facility: recipient.facility.license_number,
    packages: [],
    status: "in_transit",
    estimated_departure: iso(at - 4 * 3_600_000),
    estimated_arrival: iso(at),
    actual_departure: iso(at - 4 * 3_600_000),
    actual_arrival: iso(at),
    transporter: null,
    driver_name: null,
    vehicle_info: null,
    provider: world.provider,
    provider_transfer_id: providerId
  }
  world.transfers.push({ transfer, template: false })
  world.modified.set(transfer.id, Math.floor(at / 1000) * 1000)
  return Either.right(fire(world, transferChange(world, "transfer.arrived", transfer.id)))
}

/**
 * `transfer_arrived`: the transfer named (or the first incoming one not yet arrived, to the
 * facility named if any; or, with none left, a new one from another licensee) is in transit with
 * its arrival set now. Fires `transfer.arrived`.
 *
 * @since 0.1.0
 * @category scenarios
 */
export const arrived = define({
  params: Schema.Struct({
    transfer_id: Schema.optional(Schema.String),
    facility_id: Schema.optional(Schema.String)
  }),
  run: (world, params, at) => {
    const s = params.transfer_id !== undefined
      ? stored(world, params.transfer_id, () => true)
      : stored(
        world,
        undefined,
        (t) =>
          (t.status === "pending" || t.status === "in_transit") && t.actual_arrival === null &&
          (params.facility_id === undefined ||
            facilityByLicense(world, t.recipient_facility)?.facility.id === params.facility_id)
      )
    if (s === undefined) {
      if (params.transfer_id !== undefined) {
        return fail(ProviderError.ResourceNotFound.of("transfer", params.transfer_id))
      }
      return created(world, at, params.facility_id)
    }
    const from = s.transfer.status
    if (from !== "in_transit") {
      const moved = transition(Transitions.transferStatus, from, "in_transit")
      if (Either.isLeft(moved)) return Either.left(moved.left)
    }
    updateTransfer(world, s.transfer.id, {
      status: "in_transit",
      actual_departure: s.transfer.actual_departure ?? iso(at - 3_600_000),
      actual_arrival: iso(at)
    }, at)
    return Either.right(fire(world, transferChange(world, "transfer.arrived", s.transfer.id)))
  }
})

/**
 * `transfer_completed`: the transfer named (or the first in transit) is received, its packages
 * moved to the recipient, or rejected (`outcome`). Fires `transfer.completed`.
 *
 * @since 0.1.0
 * @category scenarios
 */
export const completed = define({
  params: Schema.Struct({
    transfer_id: Schema.optional(Schema.String),
    outcome: Schema.optionalWith(Schema.Literal("received", "rejected"), { default: () => "received" as const })
  }),
  run: (world, params, at) => {
    const outcome = params.outcome
    const s = params.transfer_id !== undefined
      ? stored(world, params.transfer_id, () => true)
      : stored(
        world,
        undefined,
        (t) => t.status === "in_transit" || (outcome === "rejected" && t.status === "pending")
      )
    if (s === undefined) {
      return params.transfer_id !== undefined
        ? fail(ProviderError.ResourceNotFound.of("transfer", params.transfer_id))
        : exhausted(
          "transfer_completed",
          "in-transit transfer",
          "transfer_id",
          "run transfer_arrived first (it creates an incoming transfer when none is pending)"
        )
    }
    const moved = transition(Transitions.transferStatus, s.transfer.status, outcome)
    if (Either.isLeft(moved)) return Either.left(moved.left)
    updateTransfer(
      world,
      s.transfer.id,
      { status: outcome, actual_arrival: s.transfer.actual_arrival ?? iso(at) },
      at
    )
    if (outcome === "received") moveReceived(world, s.transfer, at)
    return Either.right(fire(world, transferChange(world, "transfer.completed", s.transfer.id)))
  }
})
