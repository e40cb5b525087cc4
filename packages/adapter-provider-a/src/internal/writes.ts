import type { ProviderPort, Query, Session } from "@tracebridge/core"
import { Commands, Ids, LabResult, ProviderError, Units } from "@tracebridge/core"
import { Clock, Effect, Option, Schema as S } from "effect"
import type { Enricher } from "./enrich.js"
import { PROVIDER } from "./mappers/context.js"
import { onHold } from "./mappers/toPackage.js"
import { transferProviderId } from "./mappers/toTransfer.js"
import type { FacilityRef, Reader } from "./reader.js"
import { WriteResult } from "./wire/common.js"
import type { PackageV2 } from "./wire/Package.js"
import { AvailableTag, PackageV2 as PackageWire } from "./wire/Package.js"

const todayIn = Effect.map(Clock.currentTimeMillis, (now) => new Date(now).toISOString().slice(0, 10))

/**
 * The writes: a split (`POST /packages/v2/` from an unused tag), a lab result
 * (`POST /labtests/v2/record`) and a transfer (`POST /transfers/v2/templates/outgoing`: the API
 * creates templates only). Each checks what it can first, then reads back what it wrote.
 *
 * A sandbox lab result at a facility that is no lab (`recordLabResultByLab`, ADR 0020) is made as
 * Metrc makes one: a testing sample package is taken from the package at the facility, on its
 * licence (`POST /packages/v2/testing`, from an unused tag), the lab records the result on the
 * sample on the lab's licence (`POST /labtests/v2/record?licenseNumber=<lab>`; Metrc refuses it
 * from the grower's), and the result is read back from the source package, which inherits it.
 *
 * A transfer's parties arrive as licence numbers (the port resolves ids and names). A template's
 * `Packages` carry a `PackageLabel` (and a price) but no quantity: Metrc ships each package whole.
 * So every line must be all of its package (`Commands.wholePackageLine`): part of one is refused
 * at `packages.N.quantity`, telling to split first, instead of being shipped whole.
 */
export const makeWrites = (
  { client, getOne, license }: Reader,
  { enrichPackage, labResultsOfPackage, packageByLabel }: Enricher,
  transfers: ProviderPort.ResourceDriver<any, Query.Transfers>
) => {
  const splitPackage = (session: Session.Session, facility: FacilityRef, command: Commands.SplitPackage) =>
    Effect.gen(function*() {
      const sources: Array<PackageV2> = []
      for (const id of command.source_package_ids) {
        const label = Ids.decodeAs("package", PROVIDER, id)
        if (Option.isNone(label)) return yield* ProviderError.ResourceNotFound.of("package", id)
        sources.push(yield* packageByLabel(session, facility, label.value, id))
      }
      const refuse = (message: string, available: number) =>
        new ProviderError.InsufficientQuantity({
          package_id: command.source_package_ids[0]!,
          requested: command.quantity,
          available,
          unit_of_measure: command.unit_of_measure,
          message
        })
      const held = sources.find(onHold)
      if (held !== undefined) return yield* refuse(`Package ${held.Label} is on hold`, 0)
      const ingredients: Array<{ Package: string; Quantity: number; UnitOfMeasure: string }> = []
      let needed = command.quantity
      let available = 0
      for (const source of sources) {
        const inTarget = Units.convert(source.Quantity, source.UnitOfMeasureName, command.unit_of_measure)
        if (Option.isNone(inTarget)) {
          return yield* refuse(
            `Package ${source.Label} is measured in ${source.UnitOfMeasureName}, which cannot convert to ${command.unit_of_measure}`,
            available
          )
        }
        available += inTarget.value
        if (needed <= 1e-9) continue
        const take = Math.min(needed, inTarget.value)
        if (take <= 0) continue
        const inSource = Option.getOrElse(
          Units.convert(take, command.unit_of_measure, source.UnitOfMeasureName),
          () => take
        )
        ingredients.push({ Package: source.Label, Quantity: inSource, UnitOfMeasure: source.UnitOfMeasureName })
        needed -= take
      }
      if (needed > 1e-9) {
        return yield* refuse(
          `The sources hold ${available} ${command.unit_of_measure}; ${command.quantity} were asked for`,
          available
        )
      }
      // a split needs an unused tag from the tags endpoint, which some states sell as an extra
      const tag = yield* unusedTag(session, facility, "split_package")
      const actualDate = yield* todayIn
      const result = yield* client.post(
        session,
        "/packages/v2/",
        [{
          Tag: tag.Label,
          Location: sources[0]!.LocationName,
          Sublocation: null,
          Item: command.item_name,
          Quantity: command.quantity,
          UnitOfMeasure: command.unit_of_measure,
          PatientLicenseNumber: null,
          Note: null,
          ProductionBatchNumber: null,
          ActualDate: actualDate,
          ExpirationDate: null,
          SellByDate: null,
          UseByDate: null,
          Ingredients: ingredients
        }],
        WriteResult,
        { operation: "split_package", license: license(facility) }
      )
      const createdId = result.Ids[0]
      if (createdId === undefined) {
        return yield* new ProviderError.ProviderInvalidResponse({
          provider: PROVIDER,
          operation: "split_package",
          path: "Ids",
          message: "provider_a created a package but returned no id"
        })
      }
      const created = yield* getOne(session, facility, `/packages/v2/${createdId}`, PackageWire, "split_package", {
        resource: "package",
        id: String(createdId)
      })
      return yield* enrichPackage(session, facility, created)
    })

  /** An unused package tag of the facility, for a new package (a split or a testing sample). */
  const unusedTag = (session: Session.Session, facility: FacilityRef, operation: string) =>
    Effect.gen(function*() {
      const tags = yield* client.get(session, "/tags/v2/package/available", S.Array(AvailableTag), {
        operation,
        license: license(facility)
      }).pipe(
        Effect.catchTag("ProviderPermissionDenied", () =>
          Effect.fail(
            new ProviderError.CapabilityNotEnabled({
              provider: PROVIDER,
              state: session.state,
              capability: "package_tags",
              message: `${operation} needs Metrc's package tags endpoint (/tags/v2/package/available), which licence ` +
                `${license(facility)} may not use (in some states it is a paid extra): enable it for the licence in ` +
                "Metrc, then retry"
            })
          ))
      )
      const tag = tags[0]
      if (tag === undefined) {
        return yield* new ProviderError.ProviderRejected({
          provider: PROVIDER,
          operation,
          messages: ["No unused package tag is available at this facility"],
          message: "provider_a has no unused package tag for the new package; order tags first"
        })
      }
      return tag
    })

  const packageOf = (session: Session.Session, facility: FacilityRef, packageId: string) =>
    Option.match(Ids.decodeAs("package", PROVIDER, packageId), {
      onNone: () => Effect.fail(ProviderError.ResourceNotFound.of("package", packageId)),
      onSome: (label) => packageByLabel(session, facility, label, packageId)
    })

  /**
   * What Metrc would store differently is refused, naming the field (issue #30): Metrc's test rows
   * carry a test type's name, a number and a pass flag, so a category and unit come from the name
   * (`LabResult.classifyTest`) and every test has a value.
   */
  const keepsAsSent = (command: Commands.RecordLabResult) =>
    Effect.forEach(command.results, (r, i) => {
      const filed = LabResult.classifyTest(r.name)
      const refuse = (field: string, message: string) =>
        Effect.fail(
          new ProviderError.InvalidInput({ operation: "record_lab_result", path: `results.${i}.${field}`, message })
        )
      if (r.category !== filed.category) {
        return refuse(
          "category",
          `results.${i}.category ${JSON.stringify(r.category)}: Metrc files a test by its name, and files ` +
            `${JSON.stringify(r.name)} as ${filed.category}; send ${JSON.stringify(filed.category)}`
        )
      }
      if (r.unit !== filed.unit) {
        return refuse(
          "unit",
          `results.${i}.unit ${JSON.stringify(r.unit)}: Metrc reads a test's unit from its name, and ` +
            `${JSON.stringify(r.name)} reads as ${filed.unit === null ? "no unit" : JSON.stringify(filed.unit)}; ` +
            `send ${JSON.stringify(filed.unit)}, or name the unit in the test, e.g. ${
              JSON.stringify(`${r.name} (${r.unit ?? "%"})`)
            }`
        )
      }
      if (r.value === null) {
        return refuse(
          "value",
          `results.${i}.value is null: Metrc records a number for every test; send the measured value (0 for a ` +
            "pass/fail test)"
        )
      }
      return Effect.void
    }, { discard: true })

  /**
   * Records the result on `tested` (a package `recorder` holds, or a sample submitted to it) on
   * the recorder's licence, and reads it back from `source` at `facility`.
   */
  const recordOn = (
    session: Session.Session,
    facility: FacilityRef,
    recorder: FacilityRef,
    testedLabel: string,
    source: PackageV2,
    command: Commands.RecordLabResult
  ) =>
    Effect.gen(function*() {
      yield* keepsAsSent(command)
      const date = command.test_date ?? (yield* todayIn)
      const result = yield* client.post(
        session,
        "/labtests/v2/record",
        [{
          Label: testedLabel,
          ResultDate: `${date}T00:00:00Z`,
          DocumentFileName: null,
          DocumentFileBase64: null,
          Results: command.results.map((r) => ({
            LabTestTypeName: r.name,
            Quantity: r.value ?? 0,
            Passed: r.passed,
            Notes: r.notes
          }))
        }],
        WriteResult,
        { operation: "record_lab_result", license: license(recorder) }
      )
      const resultId = result.Ids[0]
      const recorded = (yield* labResultsOfPackage(session, facility, source)).find((r) =>
        r.provider_result_id === String(resultId)
      )
      if (recorded === undefined) {
        return yield* new ProviderError.ProviderInvalidResponse({
          provider: PROVIDER,
          operation: "record_lab_result",
          path: "Ids",
          message: `provider_a recorded lab result ${resultId} but does not list it`
        })
      }
      return recorded
    })

  const recordLabResult = (session: Session.Session, facility: FacilityRef, command: Commands.RecordLabResult) =>
    Effect.gen(function*() {
      const target = yield* packageOf(session, facility, command.package_id)
      return yield* recordOn(session, facility, facility, target.Label, target, command)
    })

  /** What a testing sample takes from its package: one unit of it, or all of a smaller package. */
  const SAMPLE = 1

  const recordLabResultByLab = (
    session: Session.Session,
    facility: FacilityRef,
    lab: FacilityRef,
    command: Commands.RecordLabResult
  ) =>
    Effect.gen(function*() {
      const operation = "record_lab_result"
      const source = yield* packageOf(session, facility, command.package_id)
      const quantity = Math.min(SAMPLE, source.Quantity)
      if (source.IsOnHold === true || !(quantity > 0)) {
        return yield* new ProviderError.InsufficientQuantity({
          package_id: command.package_id,
          requested: SAMPLE,
          available: source.IsOnHold === true ? 0 : source.Quantity,
          unit_of_measure: source.UnitOfMeasureName,
          message: source.IsOnHold === true
            ? `Package ${source.Label} is on hold: no testing sample can be taken from it`
            : `Package ${source.Label} is empty: no testing sample can be taken from it`
        })
      }
      // 1. the testing sample, taken from the package on the facility's own licence
      const tag = yield* unusedTag(session, facility, operation)
      yield* client.post(
        session,
        "/packages/v2/testing",
        [{
          Tag: tag.Label,
          Location: source.LocationName,
          Sublocation: null,
          Item: source.Item?.Name ?? null,
          Quantity: quantity,
          UnitOfMeasure: source.UnitOfMeasureName,
          PatientLicenseNumber: null,
          Note: null,
          IsProductionBatch: false,
          ProductionBatchNumber: null,
          IsDonation: false,
          IsTradeSample: false,
          IsFinishedGood: false,
          ProductRequiresRemediation: false,
          UseSameItem: true,
          ActualDate: yield* todayIn,
          ExpirationDate: null,
          SellByDate: null,
          UseByDate: null,
          Ingredients: [{ Package: source.Label, Quantity: quantity, UnitOfMeasure: source.UnitOfMeasureName }],
          RequiredLabTestBatches: null,
          ProcessingJobTypeId: null,
          LabTestStageId: null
        }],
        WriteResult,
        { operation, license: license(facility) }
      )
      // 2. the lab records the result on the sample, on the lab's licence; 3. the package inherits it
      return yield* recordOn(session, facility, lab, tag.Label, source, command)
    })

  const createTransfer = (session: Session.Session, facility: FacilityRef, command: Commands.CreateTransfer) =>
    Effect.gen(function*() {
      if (command.shipper_facility !== license(facility)) {
        return yield* new ProviderError.InvalidInput({
          operation: "create_transfer",
          path: "shipper_facility",
          message: `shipper_facility must be the facility the transfer is made at (${license(facility)})`
        })
      }
      const labels: Array<string> = []
      for (const [i, line] of command.packages.entries()) {
        const label = Ids.decodeAs("package", PROVIDER, line.package_id)
        if (Option.isNone(label)) return yield* ProviderError.ResourceNotFound.of("package", line.package_id)
        if (label.value !== line.tag) {
          return yield* new ProviderError.InvalidInput({
            operation: "create_transfer",
            path: `packages.${i}.tag`,
            message: `tag ${line.tag} is not the tag of package ${line.package_id}`
          })
        }
        const pkg = yield* packageByLabel(session, facility, label.value, line.package_id)
        // a template lists PackageLabels only: Metrc ships each package whole
        yield* Commands.wholePackageLine({
          provider: "Metrc (provider_a)",
          index: i,
          line,
          holds: { tag: pkg.Label, quantity: pkg.Quantity, unit_of_measure: pkg.UnitOfMeasureName }
        })
        labels.push(label.value)
      }
      const today = yield* todayIn
      const result = yield* client.post(
        session,
        "/transfers/v2/templates/outgoing",
        [{
          Name: `${command.transfer_type} to ${command.recipient_facility} (${today})`,
          TransporterFacilityLicenseNumber: command.transporter,
          DriverOccupationalLicenseNumber: null,
          DriverName: command.driver_name,
          DriverLicenseNumber: null,
          PhoneNumberForQuestions: null,
          VehicleMake: command.vehicle_info,
          VehicleModel: null,
          VehicleLicensePlateNumber: null,
          Destinations: [{
            RecipientLicenseNumber: command.recipient_facility,
            TransferTypeName: command.transfer_type,
            PlannedRoute: null,
            EstimatedDepartureDateTime: command.estimated_departure,
            EstimatedArrivalDateTime: command.estimated_arrival,
            Transporters: [],
            Packages: labels.map((PackageLabel) => ({ PackageLabel, WholesalePrice: null }))
          }]
        }],
        WriteResult,
        { operation: "create_transfer", license: license(facility) }
      ).pipe(
        // Metrc refuses a recipient licence it does not know in the row's message; the client is
        // told which field, in our words (the state system's text stays in the log; issue #30)
        Effect.catchIf(
          (e) =>
            e._tag === "ProviderRejected" &&
            e.messages.some((m) => /recipient/i.test(m) && m.includes(command.recipient_facility)),
          () =>
            new ProviderError.InvalidInput({
              operation: "create_transfer",
              path: "recipient_facility",
              message: `recipient_facility ${
                JSON.stringify(command.recipient_facility)
              } is no licence Metrc knows: send one of the connection's facilities (its id, licence number or exact name) or the licence number of another licensee`
            })
        )
      )
      const templateId = result.Ids[0]
      if (templateId === undefined) {
        return yield* new ProviderError.ProviderInvalidResponse({
          provider: PROVIDER,
          operation: "create_transfer",
          path: "Ids",
          message: "provider_a created a transfer template but returned no id"
        })
      }
      return yield* transfers.get(session, facility, transferProviderId(templateId, "template"))
    })

  return { splitPackage, recordLabResult, recordLabResultByLab, createTransfer }
}
