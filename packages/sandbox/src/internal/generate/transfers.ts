/**
 * Transfers in every status: received (the packages move to the recipient, with their lab
 * results), in transit, pending (one from an outside licence, with no package) and rejected.
 * Faker is seeded per transfer.
 */
import { faker } from "@faker-js/faker/locale/en"
import type { Package } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import * as Seed from "../../Seed.js"
import type { FacilityData, TransferData } from "../../World.js"
import type { Context } from "./context.js"
import { DAY, HOUR, isoTime, touch } from "./context.js"
import type { Cast } from "./facilities.js"
import * as packages from "./packages.js"

type Status = "pending" | "in_transit" | "received" | "rejected"

/** Moves a package, and its lab results, from one facility to another. */
const move = (from: FacilityData, to: FacilityData, pkg: Package.Package) => {
  const i = packages.indexOf(from, pkg.id)
  const current = from.packages[i]!
  if (i >= 0) from.packages.splice(i, 1)
  to.packages.push({ ...current, facility_id: to.facility.id })
  const results = from.labResults.filter((r) => r.package_id === pkg.id)
  from.labResults = from.labResults.filter((r) => r.package_id !== pkg.id)
  to.labResults.push(...results.map((r) => ({ ...r, facility_id: to.facility.id })))
}

/**
 * Adds the `n`-th transfer, from a facility of the world or an outside licence; a received one
 * moves its packages.
 */
const transfer = (
  ctx: Context,
  n: number,
  from: FacilityData | string,
  to: FacilityData,
  shipped: ReadonlyArray<Package.Package>,
  status: Status,
  departAt: number
) => {
  const { profile, provider, seed, world } = ctx
  faker.seed(Seed.integer(seed, "transfer", n))
  const { manifest, providerId } = profile.transferIds(n, profile.numeric("transfer", 0, n), false)
  const shipper = typeof from === "string" ? from : from.facility.license_number
  const departed = status !== "pending"
  const stored: TransferData = {
    template: false,
    transfer: {
      id: Ids.make("transfer", provider, providerId),
      manifest_number: manifest,
      transfer_type: "Transfer",
      shipper_facility: shipper,
      recipient_facility: to.facility.license_number,
      packages: shipped.map((p) => ({
        package_id: p.id,
        tag: p.tag,
        item_name: p.item_name,
        quantity: p.quantity,
        unit_of_measure: p.unit_of_measure
      })),
      status,
      estimated_departure: isoTime(departAt),
      estimated_arrival: isoTime(departAt + 4 * HOUR),
      actual_departure: departed ? isoTime(departAt + 10 * 60_000) : null,
      actual_arrival: status === "received" || status === "rejected" ? isoTime(departAt + 4 * HOUR) : null,
      transporter: null,
      driver_name: faker.person.fullName(),
      vehicle_info: `${faker.vehicle.manufacturer()} ${faker.vehicle.model()} ${faker.vehicle.vrm()}`,
      provider,
      provider_transfer_id: providerId
    }
  }
  world.transfers.push(stored)
  // Changed when it departed and when it arrived, never later than the reference date (a window up
  // to now must see every transfer).
  touch(ctx, stored.transfer.id, Math.min(departAt + (departed ? 4 * HOUR : 0), ctx.ref))
  if (status === "received" && typeof from !== "string") { for (const p of shipped) move(from, to, p) }
}

/**
 * Adds the world's transfers: bulk flower to the manufacturer and pre-rolls to the dispensaries
 * (received), bulk flower in transit to retail and pending to the lab, a rejected pre-roll, and a
 * pending transfer from an outside licence. `bulk` and `splits` are the packages as made.
 */
export const generate = (
  ctx: Context,
  { cultivator, lab, manufacturer, medical, retail }: Cast,
  bulk: ReadonlyArray<Package.Package>,
  splits: ReadonlyArray<Package.Package>
): void => {
  const { numericSeed, profile, ref } = ctx
  transfer(ctx, 1, cultivator, manufacturer, [bulk[4]!, bulk[5]!], "received", ref - 12 * DAY)
  transfer(ctx, 2, cultivator, retail, [splits[0]!, splits[1]!, splits[2]!], "received", ref - 10 * DAY)
  if (medical) transfer(ctx, 3, cultivator, medical, [splits[3]!, splits[4]!], "received", ref - 9 * DAY)
  transfer(ctx, 4, cultivator, retail, [bulk[6]!], "in_transit", ref - 2 * HOUR - 30 * 60_000)
  transfer(ctx, 5, cultivator, lab, [bulk[7]!], "pending", ref + DAY)
  transfer(ctx, 6, cultivator, retail, [splits[5]!], "rejected", ref - 5 * DAY)
  transfer(ctx, 7, profile.license(8, numericSeed), retail, [], "pending", ref + 2 * DAY)
}
