/**
 * The writes of provider_b: `split_package` (`inventory_split`, or `inventory_convert` for
 * another product), `record_lab_result` (`inventory_qa_sample` then
 * `inventory_qa_sample_results`) and `create_transfer` (`inventory_manifest` then
 * `inventory_transfer_outbound`). Each checks the command against fresh inventory first, clears
 * the connection's tables, and reads the created object back from the sync tables.
 *
 * BioTrack lets only QA labs enter results: `inventory_qa_sample_results` goes on the lab's login.
 * In the sandbox that is the world's lab's ({@link labSession}: the same UBI and password, the
 * username prefixed with `lab:`). A sandbox lab result at a facility that is no lab
 * (`recordLabResultByLab`, ADR 0020) is made as BioTrack makes one: the facility sends a sample of
 * its lot to the world's lab (`inventory_qa_sample` with the lab's licence as `lab_id`, on the
 * connection's login), the lab files the panels, and the result shows on the lot (`parentid`).
 *
 * `create_transfer` gets its parties as licence numbers (the port resolves ids and names). A
 * manifest stop lists barcodes (`stop_overview[].barcodeid`) and `inventory_transfer_outbound`
 * lines are documented as `{barcodeid, price}`: BioTrack ships each lot whole (to sell part of a
 * lot, BioTrack's docs say to `inventory_split` a sub-lot first). So every line must be all of its
 * lot (`Commands.wholePackageLine`): part of one is refused at `packages.N.quantity`, telling to
 * split first, instead of being shipped whole; the outbound line carries the lot's quantity.
 *
 * It sends BioTrack's documented `{employee_id, vehicle_id, location,
 * stop_overview}` (the ids as strings, resolved from `driver_name` and `vehicle_info` through
 * `sync_employee` and `sync_vehicle`, see `manifests.ts`), never the `transporter_*` columns of
 * the sync rows. It is safe to retry: before `inventory_manifest` it looks for the pending
 * manifest an earlier call made (same licence, one stop to the same recipient, exactly the same
 * barcodes) and reuses it, sending only the lines `sync_inventory_transfer` does not show yet;
 * and when `inventory_manifest` or `inventory_transfer_outbound` fails ambiguously (timeout, HTTP
 * error, unreadable answer) it looks once before failing.
 */
import type { Package, ProviderPort, Resource, Session } from "@tracebridge/core"
import { Commands, Ids, ProviderError } from "@tracebridge/core"
import { Clock, Effect, Option, Redacted } from "effect"
import type { Client } from "../ProviderBClient.js"
import { PROVIDER } from "./descriptor.js"
import * as Manifests from "./manifests.js"
import { itemName } from "./mappers/toPackage.js"
import { codeForCategory, gramsPer, inventoryType, panelTypeFor, panelTypes, round, uom } from "./mappers/vocabulary.js"
import type { Reads } from "./reads.js"
import type { SyncTablesCache } from "./tables.js"
import { WriteResult } from "./wire/Envelope.js"
import type { Inventory } from "./wire/Inventory.js"
import * as World from "./world.js"

type Facility = ProviderPort.FacilityRef

/**
 * The username prefix of the sandbox world's QA lab login (the sandbox's provider_b logins).
 */
export const LAB_LOGIN_PREFIX = "lab:"

/**
 * The login QA results are entered on: in the sandbox, the world's lab's (the connection's UBI and
 * password, the username prefixed with {@link LAB_LOGIN_PREFIX}, kept as a session of its own);
 * elsewhere the connection's own (a lab's connection is a lab's login).
 */
export const labSession = (session: Session.Session): Session.Session => {
  if (session.environment !== "sandbox") return session
  const credentials = Redacted.value(session.credentials) as Readonly<Record<string, unknown>>
  return {
    ...session,
    key: `${session.key}#lab`,
    credentials: Redacted.make({ ...credentials, username: `${LAB_LOGIN_PREFIX}${String(credentials["username"])}` })
  }
}

/** The writes over the session client, the connection's tables and the reads (to read back). */
export const make = (client: Client, tables: SyncTablesCache, reads: Reads): ProviderPort.Writes => {
  const { fresh, invalidate, sync } = tables
  const { resourceDriver } = reads

  const freshInventory = (session: Session.Session, facility: Facility, operation: string) =>
    Effect.gen(function*() {
      yield* invalidate(session)
      const { inventory } = yield* sync(session, "sync_inventory", operation)
      return World.live(inventory, facility.provider_facility_id)
    })

  const lotOf = (lots: ReadonlyArray<Inventory>, packageId: string) =>
    Option.match(Ids.decodeAs("package", PROVIDER, packageId), {
      onNone: () => Effect.fail(ProviderError.ResourceNotFound.of("package", packageId)),
      onSome: (barcode) => {
        const lot = lots.find((l) => l.id === barcode)
        return lot === undefined
          ? Effect.fail(ProviderError.ResourceNotFound.of("package", packageId))
          : Effect.succeed(lot)
      }
    })

  /** A quantity in the command's unit, in the lot's own unit; or why it cannot be. */
  const inLotUnit = (lot: Inventory, quantity: number, unit: string, packageId: string) => {
    const lotUnit = inventoryType(lot.inventorytype).unit
    const converted = unit === lotUnit
      ? quantity
      : lotUnit === "Grams" && gramsPer[unit] !== undefined
      ? round(quantity * gramsPer[unit]!)
      : undefined
    return converted === undefined
      ? Effect.fail(
        new ProviderError.InsufficientQuantity({
          package_id: packageId,
          requested: quantity,
          available: lot.remaining_quantity,
          unit_of_measure: lotUnit,
          message: `${unit} cannot be drawn from a lot counted in ${lotUnit}`
        })
      )
      : Effect.succeed(converted)
  }

  const readBack = <R extends Resource.Name>(
    session: Session.Session,
    facility: Facility,
    name: R,
    providerId: string,
    operation: string
  ) =>
    Effect.zipRight(invalidate(session), resourceDriver(name).get(session, facility, providerId)).pipe(
      Effect.catchTag("ResourceNotFound", () =>
        Effect.fail(
          new ProviderError.ProviderInvalidResponse({
            provider: PROVIDER,
            operation,
            path: "transactionid",
            message: `BioTrack accepted ${operation} but the created object is not in its sync tables`
          })
        ))
    )

  const created = (answer: WriteResult, operation: string) =>
    answer.barcode_id[0] === undefined
      ? Effect.fail(
        new ProviderError.ProviderInvalidResponse({
          provider: PROVIDER,
          operation,
          path: "barcode_id",
          message: `BioTrack answered ${operation} without the new barcode`
        })
      )
      : Effect.succeed(answer.barcode_id[0])

  const insufficientFromText =
    (packageId: string, requested: number, unit: string) =>
    <A>(self: Effect.Effect<A, ProviderError.ProviderError>): Effect.Effect<A, ProviderError.ProviderError> =>
      Effect.catchIf(
        self,
        (e): e is ProviderError.ProviderRejected =>
          e._tag === "ProviderRejected" && /insufficient|exceed|more than/i.test(e.message),
        (e) =>
          Effect.fail(
            new ProviderError.InsufficientQuantity({
              package_id: packageId,
              requested,
              available: 0,
              unit_of_measure: unit,
              message: e.messages[0] ?? e.message
            })
          )
      )

  const splitPackage = (session: Session.Session, facility: Facility, command: Commands.SplitPackage) =>
    Effect.gen(function*() {
      const operation = "split_package"
      const lots = yield* freshInventory(session, facility, operation)
      const sources = yield* Effect.forEach(command.source_package_ids, (id) => lotOf(lots, id))
      const first = sources[0]!
      const firstId = command.source_package_ids[0]!
      const unit = inventoryType(first.inventorytype).unit
      for (const [i, lot] of sources.entries()) {
        const id = command.source_package_ids[i]!
        const onHold = lot.seized || (lot.inventorystatus !== null && lot.inventorystatus !== "0")
        if (onHold || inventoryType(lot.inventorytype).unit !== unit) {
          return yield* new ProviderError.InsufficientQuantity({
            package_id: id,
            requested: command.quantity,
            available: onHold ? 0 : lot.remaining_quantity,
            unit_of_measure: inventoryType(lot.inventorytype).unit,
            message: onHold ? `${lot.id} is on hold` : `the sources mix ${unit} and another unit`
          })
        }
      }
      const wanted = yield* inLotUnit(first, command.quantity, command.unit_of_measure, firstId)
      const available = round(sources.reduce((n, l) => n + l.remaining_quantity, 0))
      if (wanted > available + 1e-9) {
        return yield* new ProviderError.InsufficientQuantity({
          package_id: firstId,
          requested: wanted,
          available,
          unit_of_measure: unit,
          message: `asked for ${wanted} ${unit} but the sources hold ${available}`
        })
      }
      let left = wanted
      const draws = sources.flatMap((lot) => {
        const take = round(Math.min(left, lot.remaining_quantity))
        left = round(left - take)
        return take > 0 ? [{ barcodeid: lot.id, remove_quantity: String(take), remove_quantity_uom: uom(unit) }] : []
      })
      const strain = command.item_strain ?? first.strain
      const sameItem = sources.length === 1 && itemName(first) === command.item_name &&
        inventoryType(first.inventorytype).category === command.item_category &&
        (first.strain ?? null) === (command.item_strain ?? null)
      const type = inventoryType(first.inventorytype).category === command.item_category
        ? first.inventorytype
        : codeForCategory(command.item_category)
      if (type === undefined) {
        return yield* new ProviderError.InvalidInput({
          operation,
          path: "item_category",
          message: `BioTrack has no inventory type for the category ${command.item_category}`
        })
      }
      const answer = yield* (sameItem
        ? client.call(session, "inventory_split", { data: draws }, WriteResult, { operation })
        : client.call(
          session,
          "inventory_convert",
          {
            data: draws,
            derivative_strain: strain,
            derivative_product: command.item_name,
            derivative_type: type,
            derivative_quantity: wanted,
            derivative_quantity_uom: uom(unit)
          },
          WriteResult,
          { operation }
        )).pipe(insufficientFromText(firstId, wanted, unit))
      const barcode = yield* created(answer, operation)
      return yield* readBack(session, facility, "packages", barcode, operation)
    }).pipe(Effect.ensuring(invalidate(session))) as Effect.Effect<Package.Package, ProviderError.ProviderError>

  /**
   * A sample of the lot of `command.package_id` at `facility` sent to `labId`, and its panels
   * entered on the lab's login; the result read back at `facility`.
   */
  const sampleAndFile = (
    session: Session.Session,
    facility: Facility,
    labId: string,
    command: Commands.RecordLabResult
  ) =>
    Effect.gen(function*() {
      const operation = "record_lab_result"
      const lots = yield* freshInventory(session, facility, operation)
      const lot = yield* lotOf(lots, command.package_id)
      const panels = new Map<number, Record<string, string | number | null>>()
      // what BioTrack would store differently is refused, naming the field (issue #30): it keeps
      // one pass/fail per sample, a number per panel key, the panel's unit, no notes, and dates a
      // sample when it is filed
      const refuse = (path: string, message: string) => new ProviderError.InvalidInput({ operation, path, message })
      const today = new Date(yield* Clock.currentTimeMillis).toISOString().slice(0, 10)
      if (command.test_date !== null && command.test_date !== today) {
        return yield* refuse(
          "test_date",
          `test_date ${command.test_date}: BioTrack dates a lab result when it is filed; leave test_date out or send ${today}`
        )
      }
      const seen = new Set<string>()
      for (const [i, result] of command.results.entries()) {
        const type = panelTypeFor(result.category)
        if (type === undefined) {
          return yield* refuse(
            `results.${i}.category`,
            `results.${i}.category ${JSON.stringify(result.category)}: BioTrack has no QA panel for it; send one of ${
              Object.values(panelTypes).map((p) => p.category).join(", ")
            }`
          )
        }
        const kind = panelTypes[type]!
        if (result.unit !== kind.unit) {
          return yield* refuse(
            `results.${i}.unit`,
            `results.${i}.unit ${JSON.stringify(result.unit)}: BioTrack's ${kind.category} panel is in ${kind.unit}; ` +
              `send ${JSON.stringify(kind.unit)}`
          )
        }
        if (result.notes !== null) {
          return yield* refuse(`results.${i}.notes`, `results.${i}.notes: BioTrack keeps no notes per test; send null`)
        }
        const filed = command.overall_passed || !kind.judged || result.value === 0
        if (result.passed !== filed) {
          return yield* refuse(
            `results.${i}.passed`,
            `results.${i}.passed is ${result.passed}: BioTrack keeps one pass or fail per sample, so a ${kind.category} ` +
              `test ${filed ? "passes" : "fails"} when the sample ${command.overall_passed ? "passes" : "fails"}${
                kind.judged ? " (a contaminant that measured 0 passes)" : ""
              }; send ${filed}`
          )
        }
        if (seen.has(`${type}/${result.name}`)) {
          return yield* refuse(`results.${i}.name`, `results.${i}.name ${JSON.stringify(result.name)} is sent twice`)
        }
        seen.add(`${type}/${result.name}`)
        const panel = panels.get(type) ?? { type }
        panel[result.name] = result.value === null ? null : String(result.value)
        panels.set(type, panel)
      }
      const sample = yield* client.call(
        session,
        "inventory_qa_sample",
        {
          barcodeid: lot.id,
          lab_id: labId,
          quantity: "0",
          quantity_uom: uom(inventoryType(lot.inventorytype).unit),
          use: command.test_type === "ResearchTesting" ? 2 : 1
        },
        WriteResult,
        { operation, notFound: { resource: "package", id: command.package_id } }
      ).pipe(
        Effect.flatMap((answer) => created(answer, operation))
      )
      yield* client.call(
        labSession(session),
        "inventory_qa_sample_results",
        {
          sample_id: sample,
          result: command.overall_passed ? 1 : -1,
          test: [...panels.values()]
        },
        WriteResult,
        { operation }
      )
      return yield* readBack(session, facility, "lab_results", sample, operation)
    }).pipe(Effect.ensuring(invalidate(session)))

  const recordLabResult = (session: Session.Session, facility: Facility, command: Commands.RecordLabResult) =>
    sampleAndFile(session, facility, command.lab_license ?? command.lab_name, command)

  const recordLabResultByLab = (
    session: Session.Session,
    facility: Facility,
    lab: Facility,
    command: Commands.RecordLabResult
  ) => sampleAndFile(session, facility, lab.provider_facility_id, command)

  const epoch = (iso: string | null) => (iso === null ? undefined : Math.floor(Date.parse(iso) / 1000))

  /**
   * A call whose answer may have been lost after BioTrack acted on it: a timeout, an HTTP error
   * or a network failure, or an answer that cannot be read.
   */
  const isAmbiguous = (e: ProviderError.ProviderError) =>
    e._tag === "ProviderTimeout" || e._tag === "ProviderUnavailable" || e._tag === "ProviderInvalidResponse"

  /**
   * Runs a write; when it fails ambiguously, looks once (`lookUp`) for what it would have made,
   * and fails with the write's own error when that is not there (or cannot be looked up).
   */
  const orLookUp = <A>(
    write: Effect.Effect<A, ProviderError.ProviderError>,
    lookUp: Effect.Effect<Option.Option<A>, ProviderError.ProviderError>
  ): Effect.Effect<A, ProviderError.ProviderError> =>
    Effect.catchIf(write, isAmbiguous, (error) =>
      lookUp.pipe(
        Effect.orElseSucceed(() => Option.none<A>()),
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(error), onSome: Effect.succeed }))
      ))

  const createTransfer = (session: Session.Session, facility: Facility, command: Commands.CreateTransfer) =>
    Effect.gen(function*() {
      const operation = "create_transfer"
      const license = facility.provider_facility_id
      // BioTrack ships to a vendor it lists, never back to the shipper (issue #30)
      const { vendor } = yield* sync(session, "sync_vendor", operation)
      if (!vendor.some((v) => !v.deleted && v.location === command.recipient_facility)) {
        return yield* new ProviderError.InvalidInput({
          operation,
          path: "recipient_facility",
          message: `recipient_facility ${
            JSON.stringify(command.recipient_facility)
          } is no licence BioTrack lists: send one of the connection's facilities (its id, licence number or exact name) or the licence number of another licensee`
        })
      }
      const lots = yield* freshInventory(session, facility, operation)
      // a manifest stop lists barcodes only: BioTrack ships each lot whole
      const lines = yield* Effect.forEach(command.packages, (line, index) =>
        Effect.gen(function*() {
          const lot = yield* lotOf(lots, line.package_id)
          yield* Commands.wholePackageLine({
            provider: "BioTrack (provider_b)",
            index,
            line,
            holds: {
              tag: lot.id,
              quantity: lot.remaining_quantity,
              unit_of_measure: inventoryType(lot.inventorytype).unit
            }
          })
          return { barcodeid: lot.id, quantity: String(lot.remaining_quantity), price: "0.00" }
        }))
      const barcodes = lines.map((l) => l.barcodeid)
      const employee = command.driver_name === null ? undefined : yield* Effect.flatMap(
        sync(session, "sync_employee", operation),
        ({ employee }) => Manifests.driver(employee, license, command.driver_name!)
      )
      const vehicle = command.vehicle_info === null ? undefined : yield* Effect.flatMap(
        sync(session, "sync_vehicle", operation),
        ({ vehicle }) => Manifests.vehicle(vehicle, license, command.vehicle_info!)
      )
      const wanted: Manifests.Wanted = {
        license,
        recipient: command.recipient_facility,
        barcodes,
        employeeId: employee?.employee_id
      }
      const pending = Effect.map(
        fresh(session, "sync_manifest", operation),
        (t) => Manifests.pendingManifest(t, wanted)
      )

      // Retry-safe: a manifest an earlier (failed or repeated) call made is reused, not made again.
      const existing = yield* pending
      const departure = epoch(command.estimated_departure)
      const arrival = epoch(command.estimated_arrival)
      const stop = Option.isSome(existing) ? existing.value : yield* orLookUp(
        client.call(
          session,
          "inventory_manifest",
          {
            ...(employee === undefined ? {} : { employee_id: employee.employee_id }),
            ...(vehicle === undefined ? {} : { vehicle_id: vehicle.vehicle_id }),
            location: license,
            stop_overview: [{
              vendor_license: command.recipient_facility,
              stop_number: 1,
              ...(departure === undefined ? {} : { approximate_departure: departure }),
              ...(arrival === undefined ? {} : { approximate_arrival: arrival }),
              approximate_route: "",
              barcodeid: barcodes
            }]
          },
          WriteResult,
          { operation }
        ).pipe(
          Effect.flatMap((answer) =>
            answer.manifest_id === undefined
              ? Effect.fail(
                new ProviderError.ProviderInvalidResponse({
                  provider: PROVIDER,
                  operation,
                  path: "manifest_id",
                  message: "BioTrack answered inventory_manifest without the manifest id"
                })
              )
              : Effect.succeed<Manifests.StopRef>({ manifestid: answer.manifest_id, stopnumber: "1" })
          )
        ),
        pending
      )

      // The lines not on the manifest yet (all of them for a new one).
      const outboundLines = (refs: Manifests.StopRef) =>
        Effect.map(
          fresh(session, "sync_inventory_transfer", operation),
          ({ inventory_transfer }) => Manifests.missingLines(inventory_transfer, refs, barcodes)
        )
      const missing = Option.isSome(existing) ? yield* outboundLines(stop) : barcodes
      if (missing.length > 0) {
        yield* orLookUp(
          client.call(
            session,
            "inventory_transfer_outbound",
            { manifest_id: stop.manifestid, data: lines.filter((l) => missing.includes(l.barcodeid)) },
            WriteResult,
            { operation }
          ).pipe(Effect.asVoid),
          Effect.map(outboundLines(stop), (left) => (left.length === 0 ? Option.some<void>(undefined) : Option.none()))
        )
      }
      return yield* readBack(session, facility, "transfers", `${stop.manifestid}/${stop.stopnumber}`, operation)
    }).pipe(Effect.ensuring(invalidate(session)))

  return { splitPackage, recordLabResult, recordLabResultByLab, createTransfer }
}
