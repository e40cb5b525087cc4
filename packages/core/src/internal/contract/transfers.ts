/**
 * Transfer writes: a new transfer is pending and reads back; its parties are taken by `fac_` id,
 * licence number or exact name, and an unknown, foreign or wrong one is `InvalidInput` at its field;
 * the shipper as recipient, an arrival before its departure and a package already on its way are
 * refused; a line of part of a package is shipped as asked or refused at `packages.0.quantity`,
 * and a line above what the package holds is `InsufficientQuantity`.
 */
import { Effect, Either } from "effect"
import type * as Commands from "../../Commands.js"
import type { Facility } from "../../Facility.js"
import * as Ids from "../../Ids.js"
import type { Package } from "../../Package.js"
import * as Page from "../../Page.js"
import { deepEqual, firstDifference } from "../equal.js"
import type { Port } from "./kit.js"
import { check, expectFailure, otherProvider } from "./kit.js"
import type { Check, Fixture } from "./model.js"
import { pickPackage, shippablePackages } from "./stock.js"

/** A transfer of `pkg` (by default all of it) between the parties given. */
export const transferOf = (
  shipper: string,
  recipient: string,
  pkg: Package,
  quantity: number = pkg.quantity
): Commands.CreateTransfer => ({
  transfer_type: "Transfer",
  shipper_facility: shipper,
  recipient_facility: recipient,
  packages: [{
    package_id: pkg.id,
    tag: pkg.tag,
    item_name: pkg.item_name,
    quantity,
    unit_of_measure: pkg.unit_of_measure
  }],
  estimated_departure: null,
  estimated_arrival: null,
  transporter: null,
  driver_name: null,
  vehicle_info: null
})

/** Whether a transfer's party field names the facility (by licence number, name or id). */
export const namesFacility = (value: string, facility: Facility) =>
  value === facility.license_number || value === facility.name || value === facility.id

/** Where the fixture facility may ship: the session's other facilities, then the fixture's licensees. */
const recipientsOf = (port: Port, fx: Fixture, facility: Facility) =>
  Effect.map(
    port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE }),
    (page) => [
      ...page.items.filter((f) => f.id !== facility.id).map((f) => f.license_number),
      ...(fx.licensees ?? [])
    ]
  )

export const transferCount = (port: Port, fx: Fixture) =>
  Effect.map(port.list("transfers", fx.session, fx.facilityId, {}, Page.firstPage), (p) => p.pagination.total)

/** The checks of `create_transfer`. */
export const transferChecks: ReadonlyArray<Check> = [
  check(
    "writes: create_transfer creates a pending transfer that later reads return",
    (port, fx, assert) =>
      Effect.gen(function*() {
        const pkg: Package | undefined = yield* pickPackage(port, fx)
        yield* assert(pkg !== undefined, "the fixture facility holds no package to ship")
        const facility = yield* port.getFacility(fx.session, fx.facilityId)
        const recipients = yield* recipientsOf(port, fx, facility)
        yield* assert(recipients.length > 0, "the session has one facility and the fixture names no licensees")
        const before = yield* port.list("transfers", fx.session, fx.facilityId, {}, Page.firstPage)
        const created = yield* port.createTransfer(fx.session, fx.facilityId, {
          transfer_type: "Transfer",
          shipper_facility: facility.license_number,
          recipient_facility: recipients[0]!,
          packages: [{
            package_id: pkg!.id,
            tag: pkg!.tag,
            item_name: pkg!.item_name,
            quantity: pkg!.quantity,
            unit_of_measure: pkg!.unit_of_measure
          }],
          estimated_departure: null,
          estimated_arrival: null,
          transporter: null,
          driver_name: null,
          vehicle_info: null
        })
        yield* assert(created.status === "pending", `a new transfer is ${created.status}, expected pending`)
        const got = yield* port.get("transfers", fx.session, fx.facilityId, created.id)
        yield* assert(
          deepEqual(got, created),
          `the created transfer reads back differently at ${firstDifference(got, created)}`
        )
        const list = yield* port.list("transfers", fx.session, fx.facilityId, {}, Page.firstPage)
        yield* assert(list.pagination.total === before.pagination.total + 1, "the transfer list did not grow by one")
      })
  ),
  check(
    "writes: create_transfer takes its parties by fac_ id, licence number or exact name",
    (port, fx, assert) =>
      Effect.gen(function*() {
        const facility = yield* port.getFacility(fx.session, fx.facilityId)
        const facilities = yield* port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE })
        const other = facilities.items.find((f) => f.id !== facility.id)
        const shipped = yield* shippablePackages(port, fx, 2)
        yield* assert(shipped.length === 2, "the fixture facility holds fewer than two packages to ship")
        const before = yield* transferCount(port, fx)
        // with no other facility in the session, the recipient is another licensee's licence number
        const licensee = fx.licensees?.[0] ?? ""
        yield* assert(other !== undefined || licensee !== "", "the session has one facility and no licensees")
        const created = [
          yield* port.createTransfer(
            fx.session,
            fx.facilityId,
            transferOf(facility.id, other?.name ?? licensee, shipped[0]!)
          ),
          yield* port.createTransfer(
            fx.session,
            fx.facilityId,
            transferOf(facility.name, other?.id ?? licensee, shipped[1]!)
          )
        ]
        for (const transfer of created) {
          yield* assert(
            namesFacility(transfer.shipper_facility, facility),
            `the transfer's shipper_facility is ${transfer.shipper_facility}, not ${facility.license_number}`
          )
          yield* assert(
            other === undefined
              ? transfer.recipient_facility === licensee
              : namesFacility(transfer.recipient_facility, other),
            `the transfer's recipient_facility is ${transfer.recipient_facility}, not ${
              other?.license_number ?? licensee
            }`
          )
        }
        yield* assert((yield* transferCount(port, fx)) === before + 2, "the transfer list did not grow by two")
      })
  ),
  check(
    "writes: create_transfer refuses an unknown, foreign or wrong party with InvalidInput naming the field",
    (port, fx, assert) =>
      Effect.gen(function*() {
        const provider = port.descriptor.name
        const facility = yield* port.getFacility(fx.session, fx.facilityId)
        const facilities = yield* port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE })
        const other = facilities.items.find((f) => f.id !== facility.id)
        const pkg = yield* pickPackage(port, fx)
        yield* assert(pkg !== undefined, "the fixture facility holds no package to ship")
        const unknownId = Ids.make("facility", provider, "tracebridge-contract-missing-0")
        const foreignId = Ids.make("facility", otherProvider(provider), facility.license_number)
        const noName = "Tracebridge Contract Kit No Such Facility"
        const cases: ReadonlyArray<readonly [string, string, "shipper_facility" | "recipient_facility"]> = [
          [unknownId, facility.license_number, "shipper_facility"],
          [foreignId, facility.license_number, "shipper_facility"],
          [noName, facility.license_number, "shipper_facility"],
          [facility.id, unknownId, "recipient_facility"],
          [facility.id, "fac_%%%", "recipient_facility"],
          [facility.id, noName, "recipient_facility"],
          ...(other === undefined ? [] : [
            [other.id, facility.license_number, "shipper_facility"] as const,
            [other.license_number, facility.license_number, "shipper_facility"] as const
          ]),
          // a fixture that declares the licensees the system knows: any other licence is unknown
          ...(fx.licensees === undefined ? [] : [
            [facility.id, "TRACEBRIDGE-CONTRACT-UNKNOWN-1", "recipient_facility"] as const
          ])
        ]
        const before = yield* transferCount(port, fx)
        for (const [shipper, recipient, field] of cases) {
          const error = yield* expectFailure(
            port.createTransfer(fx.session, fx.facilityId, transferOf(shipper, recipient, pkg!)),
            "InvalidInput",
            `a transfer from ${shipper} to ${recipient}`
          )
          const path = (error as { readonly path?: unknown }).path
          yield* assert(
            path === field,
            `a transfer from ${shipper} to ${recipient} was refused at ${String(path)}, expected ${field}`
          )
        }
        yield* assert((yield* transferCount(port, fx)) === before, "a refused transfer changed the transfer list")
      })
  ),
  check(
    "writes: create_transfer refuses the shipper as its recipient, an arrival before its departure, and a package " +
      "already on its way, changing nothing",
    (port, fx, assert) =>
      Effect.gen(function*() {
        const facility = yield* port.getFacility(fx.session, fx.facilityId)
        const recipients = yield* recipientsOf(port, fx, facility)
        yield* assert(recipients.length > 1, "the fixture facility has fewer than two places to ship to")
        const recipient = recipients[0]!
        const shipped = yield* shippablePackages(port, fx, 1)
        yield* assert(shipped.length === 1, "the fixture facility holds no package to ship")
        const pkg = shipped[0]!
        const before = yield* transferCount(port, fx)
        const self = yield* expectFailure(
          port.createTransfer(fx.session, fx.facilityId, transferOf(facility.id, facility.license_number, pkg)),
          "InvalidInput",
          "the shipper as its own recipient"
        )
        yield* assert(
          (self as { readonly path?: unknown }).path === "recipient_facility",
          `the shipper as recipient was refused at ${
            (self as { readonly path?: unknown }).path
          }, not recipient_facility`
        )
        const backwards = yield* expectFailure(
          port.createTransfer(fx.session, fx.facilityId, {
            ...transferOf(facility.license_number, recipient, pkg),
            estimated_departure: "2026-06-02T10:00:00.000Z",
            estimated_arrival: "2026-06-01T10:00:00.000Z"
          }),
          "InvalidInput",
          "an arrival before its departure"
        )
        yield* assert(
          (backwards as { readonly path?: unknown }).path === "estimated_arrival",
          `an arrival before its departure was refused at ${
            (backwards as { readonly path?: unknown }).path
          }, not estimated_arrival`
        )
        yield* assert((yield* transferCount(port, fx)) === before, "a refused transfer changed the transfer list")
        // the package goes on one transfer; the same transfer again is answered with the first (a
        // retry) or refused, never made twice; another transfer of it is refused while the first
        // is on its way
        const first = yield* port.createTransfer(
          fx.session,
          fx.facilityId,
          transferOf(facility.license_number, recipient, pkg)
        )
        const retried = yield* Effect.either(
          port.createTransfer(fx.session, fx.facilityId, transferOf(facility.license_number, recipient, pkg))
        )
        yield* assert(
          Either.isLeft(retried) || retried.right.id === first.id,
          `the same transfer again made another: ${Either.isRight(retried) ? retried.right.id : ""} after ${first.id}`
        )
        const again = yield* expectFailure(
          port.createTransfer(
            fx.session,
            fx.facilityId,
            transferOf(facility.license_number, recipients[1]!, pkg)
          ),
          "PackageInTransfer",
          "a package already on a pending transfer"
        )
        yield* assert(
          (again as { readonly path?: unknown }).path === "packages.0.package_id",
          `the refusal names no line: ${again.message}`
        )
        yield* assert(
          (yield* transferCount(port, fx)) === before + 1,
          "the refused second transfer changed the transfer list"
        )
      })
  ),
  check(
    "writes: create_transfer honours a line's quantity or refuses part of a package, and refuses more than it holds",
    (port, fx, assert) =>
      Effect.gen(function*() {
        const facility = yield* port.getFacility(fx.session, fx.facilityId)
        const [recipient] = yield* recipientsOf(port, fx, facility)
        yield* assert(recipient !== undefined, "the session has one facility and the fixture names no licensees")
        const pkg = yield* pickPackage(port, fx)
        yield* assert(pkg !== undefined, "the fixture facility holds no package of quantity 2 or more off hold")
        const before = yield* transferCount(port, fx)
        yield* expectFailure(
          port.createTransfer(
            fx.session,
            fx.facilityId,
            transferOf(facility.license_number, recipient!, pkg!, Math.ceil(pkg!.quantity) + 1000)
          ),
          "InsufficientQuantity",
          "a transfer line above what its package holds"
        )
        yield* assert((yield* transferCount(port, fx)) === before, "a refused transfer changed the transfer list")
        // part of the package: shipped as asked, or refused naming the line's quantity (a state
        // system that ships whole packages only); never recorded as the whole package
        const part = yield* Effect.either(
          port.createTransfer(
            fx.session,
            fx.facilityId,
            transferOf(facility.license_number, recipient!, pkg!, 1)
          )
        )
        if (Either.isLeft(part)) {
          const path = (part.left as { readonly path?: unknown }).path
          yield* assert(
            part.left._tag === "InvalidInput" && path === "packages.0.quantity",
            `a line of 1 of ${pkg!.quantity} ${pkg!.unit_of_measure} was refused with ${part.left._tag} at ${
              String(path)
            }: ${part.left.message}; expected it shipped, or InvalidInput at packages.0.quantity`
          )
          yield* assert((yield* transferCount(port, fx)) === before, "a refused transfer changed the transfer list")
        } else {
          const line = part.right.packages.find((l) => l.package_id === pkg!.id)
          yield* assert(
            line !== undefined && Math.abs(line.quantity - 1) < 1e-6 &&
              line.unit_of_measure === pkg!.unit_of_measure,
            `a line of 1 ${pkg!.unit_of_measure} of a package of ${pkg!.quantity} was recorded as ${
              line === undefined ? "nothing" : `${line.quantity} ${line.unit_of_measure}`
            }`
          )
          const got = yield* port.get("transfers", fx.session, fx.facilityId, part.right.id)
          yield* assert(
            deepEqual(got, part.right),
            `the created transfer reads back differently at ${firstDifference(got, part.right)}`
          )
        }
      })
  )
]
