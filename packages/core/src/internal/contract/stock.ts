/**
 * The packages a write may use (off hold, on no transfer on its way), and the facility a write is
 * made at.
 */
import { Effect } from "effect"
import type { WriteName } from "../../ProviderDescriptor.js"
import type { Port } from "./kit.js"
import type { Fixture } from "./model.js"

/** The ids of the facility's packages on a transfer that has not arrived (none without a transfers list). */
export const onTheirWay = (port: Port, fx: Fixture, facilityId: string) =>
  Effect.forEach(
    ["pending", "in_transit"] as const,
    (status) => port.listAll("transfers", fx.session, facilityId, { status }),
    { concurrency: 1 }
  ).pipe(
    Effect.map((lists) => new Set(lists.flat().flatMap((t) => t.packages.map((p) => p.package_id)))),
    Effect.catchAll(() => Effect.succeed(new Set<string>()))
  )

/** Packages of the facility free to use: off hold, and on no transfer that has not arrived. */
export const freePackages = (port: Port, fx: Fixture, facilityId: string) =>
  Effect.zipWith(
    port.listAll("packages", fx.session, facilityId, { is_on_hold: false }),
    onTheirWay(port, fx, facilityId),
    (all, away) => all.filter((p) => !away.has(p.id))
  )

/** A free package of the facility holding at least 2. */
export const pickPackage = (port: Port, fx: Fixture, facilityId = fx.facilityId) =>
  Effect.map(freePackages(port, fx, facilityId), (all) => all.find((p) => p.quantity >= 2))

/** Packages of the facility that can be shipped (off hold, holding something, not on their way), at most `count`. */
export const shippablePackages = (port: Port, fx: Fixture, count: number) =>
  Effect.map(freePackages(port, fx, fx.facilityId), (all) => all.filter((p) => p.quantity > 0).slice(0, count))

/** The facility a write is made at. */
export const writeFacilityOf = (fx: Fixture, write: WriteName): string => fx.writeFacilityFor?.[write] ?? fx.facilityId
