/**
 * The POST endpoints of the emulator, as Metrc's v2 answers them: the body is a JSON array of 1
 * to 10 objects (none: 400 `{Message}`; more: 413), an object that does not decode or that the
 * world refuses is a 400 `[{row,message}]`, and an accepted write answers `{Ids,Warnings}`.
 *
 * The emulator writes the first object of an array.
 */
import type { Package } from "@tracebridge/core"
import { Either } from "effect"
import type { Sandbox } from "../../Sandbox.js"
import type { Refusal } from "../../Writes.js"
import * as Requests from "./requests.js"
import { empty, json, message, rows } from "./responses.js"
import type { Scope } from "./serialize.js"
import * as Serialize from "./serialize.js"

/** What a POST endpoint reads: the sandbox, the facility, the first object of the body, the time. */
export interface Context extends Scope {
  readonly sandbox: Sandbox
  readonly body: unknown
  readonly now: number
}

/** A POST endpoint of a facility (`?licenseNumber=`). */
export type Handler = (ctx: Context) => Response

/** The objects of a write body, or the answer refusing it (not an array, empty, more than 10). */
export const objectsOf = (body: unknown): Either.Either<ReadonlyArray<unknown>, Response> => {
  if (!Array.isArray(body) || body.length === 0) return Either.left(message(400, "No data was submitted."))
  if (body.length > 10) return Either.left(empty(413))
  return Either.right(body)
}

const invalid = (text: string) => rows([{ row: 0, message: text }])

const refused = (refusal: Refusal) => invalid(refusal.message)

const created = (id: number) => json(Serialize.writeResult([id]))

/** `POST /packages/v2/`: a package drawn from others (a split). */
export const createPackage: Handler = (ctx) => packageFrom(ctx, false)

/**
 * `POST /packages/v2/testing`: a testing sample package drawn from one package (the same body),
 * submitted for testing (`IsTestingSample`, `LabTestingState` SubmittedForTesting); the lab's
 * `labtests/record` on it shows on the package it was taken from.
 */
export const createTestingPackage: Handler = (ctx) => packageFrom(ctx, true)

const packageFrom = (ctx: Context, testingSample: boolean): Response => {
  const obj = Requests.createPackage(ctx.body)
  if (obj === undefined) return invalid("The package data is invalid.")
  const result = ctx.sandbox.apply<Package.Package>(ctx.world, {
    _tag: "SplitPackage",
    input: {
      license: ctx.data.facility.license_number,
      tag: obj.Tag,
      itemName: obj.Item ?? "",
      quantity: obj.Quantity,
      unit: obj.UnitOfMeasure,
      ingredients: obj.Ingredients.map((i) => ({ tag: i.Package, quantity: i.Quantity, unit: i.UnitOfMeasure })),
      at: ctx.now,
      ...(testingSample ? { testingSample } : {})
    }
  })
  return Either.match(result, {
    onLeft: refused,
    onRight: (pkg) => created(Number(pkg.provider_package_id))
  })
}

/**
 * `POST /labtests/v2/record`: the results of one tested package: one the lab holds, or a testing
 * sample of the world submitted to it (the result shows on the sample's source package).
 */
export const recordLabTest: Handler = (ctx) => {
  // only a testing facility (FacilityType.CanTestPackages) records results, as Metrc permits
  if (!ctx.data.facility.capabilities.includes("labs")) {
    return message(403, "The licence is not permitted to record lab test results.")
  }
  const obj = Requests.recordLabTest(ctx.body)
  if (obj === undefined) return invalid("The lab test data is invalid.")
  const result = ctx.sandbox.apply<{ readonly provider_result_id: string }>(ctx.world, {
    _tag: "RecordLabResult",
    input: {
      license: ctx.data.facility.license_number,
      tag: obj.Label,
      results: obj.Results.map((r) => ({
        name: r.LabTestTypeName,
        value: r.Quantity,
        passed: r.Passed,
        notes: r.Notes
      })),
      testDate: obj.ResultDate.slice(0, 10),
      at: ctx.now
    }
  })
  return Either.match(result, {
    onLeft: refused,
    onRight: (recorded) => created(Number(recorded.provider_result_id))
  })
}

/** `POST /transfers/v2/templates/outgoing`: a transfer template to its first destination. */
export const createTemplate: Handler = (ctx) => {
  const obj = Requests.createTemplate(ctx.body)
  if (obj === undefined) return invalid("The transfer template data is invalid.")
  const destination = obj.Destinations[0]
  if (destination === undefined) return invalid("A transfer template needs a destination.")
  const vehicle = [obj.VehicleMake, obj.VehicleModel, obj.VehicleLicensePlateNumber]
    .filter((x) => x !== null && x !== "")
    .join(" ")
  const result = ctx.sandbox.apply<{ readonly provider_transfer_id: string }>(ctx.world, {
    _tag: "CreateTransfer",
    input: {
      license: ctx.data.facility.license_number,
      recipient: destination.RecipientLicenseNumber,
      transferType: destination.TransferTypeName,
      tags: destination.Packages.map((p) => p.PackageLabel),
      estimatedDeparture: destination.EstimatedDepartureDateTime,
      estimatedArrival: destination.EstimatedArrivalDateTime,
      driverName: obj.DriverName,
      vehicleInfo: vehicle || null,
      transporter: obj.TransporterFacilityLicenseNumber,
      template: true,
      at: ctx.now
    }
  })
  return Either.match(result, {
    onLeft: refused,
    onRight: (transfer) => created(Serialize.numericTransferId(transfer.provider_transfer_id))
  })
}
