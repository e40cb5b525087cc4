/**
 * Writes: each declared write works and reads return what it made, an invalid command is
 * `InvalidInput` and changes nothing, a split beyond its source is `InsufficientQuantity`, a
 * production session is `SandboxOnly`, and a write that needs a facility capability is refused
 * elsewhere (a lab result elsewhere is recorded by the sandbox world's lab). Transfers are
 * `transfers.ts`.
 */
import { Effect, Either } from "effect"
import type * as Commands from "../../Commands.js"
import type { CapabilityTag } from "../../Facility.js"
import * as Ids from "../../Ids.js"
import * as Page from "../../Page.js"
import type { WriteName } from "../../ProviderDescriptor.js"
import type { ProviderError } from "../../ProviderError.js"
import type { Session } from "../../Session.js"
import { deepEqual, firstDifference } from "../equal.js"
import type { Port } from "./kit.js"
import { check, expectFailure } from "./kit.js"
import type { Check, Fixture } from "./model.js"
import { pickPackage, writeFacilityOf } from "./stock.js"
import { transferChecks } from "./transfers.js"

/**
 * A write the descriptor says needs a facility capability is refused, before anything is written,
 * at a facility of the session without it; and works at one with it (the write's own check).
 * `record_lab_result` is the exception: {@link labResultByLabCheck}.
 */
export const writeNeedsCheck = (write: WriteName, needs: CapabilityTag) =>
  check(
    `writes: ${write} needs a facility with the ${needs} capability, and is refused elsewhere`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const facilities = yield* port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE })
        const without = facilities.items.find((f) => !f.capabilities.includes(needs))
        yield* assert(without !== undefined, `every facility of the fixture session has ${needs}: add one without`)
        const at = facilities.items.find((f) => f.id === writeFacilityOf(fx, write))
        yield* assert(
          at !== undefined && at.capabilities.includes(needs),
          `writeFacilityFor.${write} must be a facility with ${needs}`
        )
        const target = yield* pickPackage(port, fx, without!.id)
        const recorder = yield* recorderOf(port, fx, without!.id)
        const outcome = yield* Effect.either<unknown, ProviderError, never>(
          write === "record_lab_result"
            ? port.recordLabResult(fx.session, without!.id, {
              package_id: target?.id ?? Ids.make("package", port.descriptor.name, "1"),
              lab_name: recorder.lab_name,
              overall_passed: true,
              results: [{ name: "THC", category: "potency", value: 20, unit: "%", passed: true, notes: null }],
              lab_license: null,
              test_type: "ComplianceTesting",
              test_date: null
            })
            : write === "split_package"
            ? port.splitPackage(fx.session, without!.id, {
              item_name: target?.item_name ?? "x",
              item_category: target?.item_category ?? "x",
              item_strain: null,
              quantity: 1,
              unit_of_measure: target?.unit_of_measure ?? "Grams",
              source_package_ids: target === undefined ? [] : [target.id]
            })
            : port.createTransfer(fx.session, without!.id, {
              transfer_type: "Transfer",
              shipper_facility: without!.license_number,
              recipient_facility: at!.license_number,
              packages: target === undefined ? [] : [{
                package_id: target.id,
                tag: target.tag,
                item_name: target.item_name,
                quantity: 1,
                unit_of_measure: target.unit_of_measure
              }],
              estimated_departure: null,
              estimated_arrival: null,
              transporter: null,
              driver_name: null,
              vehicle_info: null
            })
        )
        yield* assert(
          Either.isLeft(outcome) && outcome.left._tag === "CapabilityNotEnabled",
          `${write} at ${without!.name} answered ${
            Either.isLeft(outcome) ? outcome.left._tag : "a success"
          }, expected CapabilityNotEnabled`
        )
      })
  )

/**
 * A sandbox lab result at a facility without the capability lab results need (`writeNeeds`) is
 * recorded by the sandbox world's lab on a sample of the package, and shows on the package
 * (DECISIONS "Sandbox writes"; ADR 0020): the result is on the package asked for, at that
 * facility, kept as sent, listed once by the facility and by the package, and the package's
 * `lab_results` and `lab_testing_state` show it.
 */
export const labResultByLabCheck = (needs: CapabilityTag) =>
  check(
    `writes: record_lab_result at a facility without ${needs} is recorded by the sandbox world's lab`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const facilities = (yield* port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE })).items
        const main = facilities.find((f) => f.id === fx.facilityId)
        const without = main !== undefined && !main.capabilities.includes(needs)
          ? main
          : facilities.find((f) => !f.capabilities.includes(needs))
        yield* assert(without !== undefined, `every facility of the fixture session has ${needs}: add one without`)
        yield* assert(
          facilities.some((f) => f.capabilities.includes(needs)),
          `the fixture session has no facility with ${needs}: the sandbox world needs its lab`
        )
        const at = without!.id
        const target = yield* pickPackage(port, fx, at)
        yield* assert(target !== undefined, `${without!.name} holds no package to test`)
        const before = yield* port.listAll("lab_results", fx.session, at, { package_id: target!.id })
        const created = yield* port.recordLabResult(fx.session, at, {
          package_id: target!.id,
          ...(yield* recorderOf(port, fx, at)),
          overall_passed: false,
          results: keptTests(19.5),
          test_type: "ComplianceTesting",
          test_date: null
        })
        yield* assert(created.package_id === target!.id, "the result is not on the package asked for (not the sample)")
        yield* assert(created.facility_id === at, "the result is not on the facility asked at")
        yield* assert(created.overall_passed === false, "overall_passed was not kept")
        yield* assert(
          created.results.map((r) => `${r.name}:${r.passed}`).join() === "THC:true,Pesticides:false",
          "the tests were not kept as sent"
        )
        const after = yield* port.listAll("lab_results", fx.session, at, { package_id: target!.id })
        yield* assert(after.length === before.length + 1, "the package's lab result list did not grow by one")
        const listed = after.filter((r) => r.id === created.id)
        yield* assert(
          listed.length === 1 && deepEqual(listed[0], created),
          "the created result is not listed once as it was answered"
        )
        const all = yield* port.listAll("lab_results", fx.session, at, {})
        yield* assert(
          all.filter((r) => r.id === created.id).length === 1,
          "the facility's list has the result not once"
        )
        const pkg = yield* port.get("packages", fx.session, at, target!.id)
        yield* assert(
          pkg.lab_results.filter((r) => r.id === created.id).length === 1,
          "the package's lab_results do not show the result once"
        )
        yield* assert(pkg.lab_testing_state === "TestFailed", `lab_testing_state is ${pkg.lab_testing_state}`)
      })
  )

/**
 * The facility that records a lab result made at `at`: `at` itself, or, where the write needs a
 * capability `at` lacks, the session's facility that has it (the sandbox world's lab). A lab
 * result names it (`lab_name`, `lab_license`): a state system records the recording lab's own.
 */
const recorderOf = (port: Port, fx: Fixture, at: string) =>
  Effect.map(port.listFacilities(fx.session, { page: 1, per_page: Page.MAX_PER_PAGE }), (page) => {
    const needs = port.descriptor.writeNeeds?.record_lab_result
    const here = page.items.find((f) => f.id === at)
    const lab = needs === undefined || here?.capabilities.includes(needs)
      ? here
      : page.items.find((f) => f.id !== at && f.capabilities.includes(needs))
    return { lab_name: lab?.name ?? "", lab_license: lab?.license_number ?? null }
  })

/**
 * Tests every provider's vocabulary keeps as sent: a category and unit a test's name implies
 * (Metrc), a number for every test and no notes (BioTrack), and pass flags that follow
 * `overall_passed` (a failed sample's contaminant fails, its potency passes).
 */
const keptTests = (thc: number) => [
  { name: "THC", category: "potency", value: thc, unit: "%", passed: true, notes: null },
  { name: "Pesticides", category: "pesticides", value: 0.9, unit: "ppm", passed: false, notes: null }
]

/** An invalid command of each write. */
const invalidWrites = (port: Port, fx: Fixture): Record<WriteName, Effect.Effect<unknown, ProviderError>> => ({
  split_package: port.splitPackage(fx.session, fx.facilityId, {
    item_name: "x",
    item_category: "x",
    item_strain: null,
    quantity: -1,
    unit_of_measure: "Grams",
    source_package_ids: []
  }),
  record_lab_result: port.recordLabResult(fx.session, fx.facilityId, {
    package_id: Ids.make("package", port.descriptor.name, "1"),
    lab_name: "x",
    overall_passed: true,
    results: [],
    lab_license: null,
    test_type: "ComplianceTesting",
    test_date: null
  }),
  create_transfer: port.createTransfer(fx.session, fx.facilityId, {
    transfer_type: "Transfer",
    shipper_facility: "x",
    recipient_facility: "y",
    packages: [],
    estimated_departure: null,
    estimated_arrival: null,
    transporter: null,
    driver_name: null,
    vehicle_info: null
  })
})

/** A write with an invalid command is `InvalidInput` and changes no list. */
export const invalidWriteCheck = (name: WriteName) =>
  check(
    `writes: ${name} with an invalid command is InvalidInput and changes nothing`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const counts = () =>
          Effect.all([
            port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage),
            port.list("transfers", fx.session, fx.facilityId, {}, Page.firstPage),
            port.list("lab_results", fx.session, fx.facilityId, {}, Page.firstPage)
          ]).pipe(
            Effect.map((pages) => pages.map((p) => p.pagination.total)),
            Effect.catchTag("CapabilityNotEnabled", () => Effect.succeed<ReadonlyArray<number>>([]))
          )
        const before = yield* counts()
        yield* expectFailure(invalidWrites(port, fx)[name], "InvalidInput", `${name} invalid`)
        const after = yield* counts()
        yield* assert(deepEqual(before, after), `a refused ${name} changed the lists: [${before}] → [${after}]`)
      })
  )

/** The checks of each declared write: it works, and reads return what it made. */
export const writeChecks: Record<WriteName, ReadonlyArray<Check>> = {
  split_package: [
    check(
      "writes: split_package creates a package that later reads return",
      (port, fx, assert) =>
        Effect.gen(function*() {
          const source = yield* pickPackage(port, fx)
          yield* assert(source !== undefined, "the fixture facility holds no package of quantity 2 or more off hold")
          const before = yield* port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage)
          const amount = Math.floor(source!.quantity) / 2
          const command: Commands.SplitPackage = {
            item_name: source!.item_name,
            item_category: source!.item_category,
            item_strain: source!.item_strain,
            quantity: amount,
            unit_of_measure: source!.unit_of_measure,
            source_package_ids: [source!.id]
          }
          const created = yield* port.splitPackage(fx.session, fx.facilityId, command)
          const got = yield* port.get("packages", fx.session, fx.facilityId, created.id)
          yield* assert(
            deepEqual(got, created),
            `the created package reads back differently at ${firstDifference(got, created)}`
          )
          yield* assert(created.source_package_ids.includes(source!.id), "the new package does not name its source")
          yield* assert(
            Math.abs(created.quantity - amount) < 1e-6,
            `the new package holds ${created.quantity}, asked ${amount}`
          )
          const after = yield* port.get("packages", fx.session, fx.facilityId, source!.id)
          yield* assert(
            Math.abs(after.quantity - (source!.quantity - amount)) < 1e-6,
            `the source went from ${source!.quantity} to ${after.quantity} after taking ${amount}`
          )
          const list = yield* port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage)
          yield* assert(list.pagination.total === before.pagination.total + 1, "the package list did not grow by one")
        })
    ),
    check(
      "writes: split_package beyond the source is InsufficientQuantity and changes nothing",
      (port, fx, assert) =>
        Effect.gen(function*() {
          const source = yield* pickPackage(port, fx)
          yield* assert(source !== undefined, "the fixture facility holds no package of quantity 2 or more off hold")
          const before = yield* port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage)
          yield* expectFailure(
            port.splitPackage(fx.session, fx.facilityId, {
              item_name: source!.item_name,
              item_category: source!.item_category,
              item_strain: source!.item_strain,
              quantity: source!.quantity + 1000,
              unit_of_measure: source!.unit_of_measure,
              source_package_ids: [source!.id]
            }),
            "InsufficientQuantity",
            "oversized split"
          )
          const after = yield* port.get("packages", fx.session, fx.facilityId, source!.id)
          yield* assert(after.quantity === source!.quantity, "the source quantity changed after a refused split")
          const list = yield* port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage)
          yield* assert(list.pagination.total === before.pagination.total, "a refused split changed the package count")
        })
    )
  ],
  record_lab_result: [
    check(
      "writes: record_lab_result creates a result that later reads return",
      (port, fx, assert) =>
        Effect.gen(function*() {
          const at = writeFacilityOf(fx, "record_lab_result")
          const target = yield* pickPackage(port, fx, at)
          yield* assert(target !== undefined, "the lab result's facility holds no package to test")
          const before = yield* port.listAll("lab_results", fx.session, at, { package_id: target!.id })
          const created = yield* port.recordLabResult(fx.session, at, {
            package_id: target!.id,
            ...(yield* recorderOf(port, fx, at)),
            overall_passed: false,
            results: keptTests(21.5),
            test_type: "ComplianceTesting",
            test_date: null
          })
          yield* assert(created.package_id === target!.id, "the result is not on the package asked for")
          yield* assert(created.overall_passed === false, "overall_passed was not kept")
          const after = yield* port.listAll("lab_results", fx.session, at, { package_id: target!.id })
          yield* assert(after.length === before.length + 1, "the lab result list did not grow by one")
          const listed = after.find((r) => r.id === created.id)
          yield* assert(listed !== undefined && deepEqual(listed, created), "the created result reads back differently")
        })
    )
  ],
  create_transfer: transferChecks
}

/** A write with a production session is `SandboxOnly`. */
export const productionRefusal = check(
  "writes: refused outside the sandbox with SandboxOnly",
  (port, fx) =>
    Effect.gen(function*() {
      const production: Session = { ...fx.session, environment: "production" }
      const pkg = yield* port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage)
      const id = pkg.items[0]?.id ?? Ids.make("package", port.descriptor.name, "1")
      yield* expectFailure(
        port.splitPackage(production, fx.facilityId, {
          item_name: "x",
          item_category: "x",
          item_strain: null,
          quantity: 1,
          unit_of_measure: "Grams",
          source_package_ids: [id]
        }),
        "SandboxOnly",
        "production write"
      )
    })
)
