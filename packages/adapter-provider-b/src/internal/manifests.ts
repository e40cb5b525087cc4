/**
 * What `create_transfer` needs besides the lots: the BioTrack employee and vehicle that
 * `inventory_manifest` names by id (`employee_id`, `vehicle_id`), resolved from the command's
 * free-text `driver_name` and `vehicle_info`; and the pending manifest a repeated or lost
 * `inventory_manifest` already made, so that a retry reuses it instead of making another.
 *
 * Matching is on the live rows (the last row of an id wins; deleted ones are dropped) of the
 * facility's licence (rows with another `location` are left out; rows without one belong to the
 * whole login, as the recorded `sync_employee` rows do):
 *
 * - a driver: an exact `employee_id`, else the employee's name, case- and space-insensitively;
 * - a vehicle: an exact `vehicle_id`, else, case- and space-insensitively, its nickname, plate,
 *   VIN, "make model", "color make model", "color make model plate" (the manifest's
 *   `transporter_vehicle_details`) or that and the VIN (what a transfer read back shows as
 *   `vehicle_info`); plates and VINs also without their spaces and dashes.
 *
 * No match, or matches of several, is `InvalidInput` naming the command's field.
 */
import { ProviderError } from "@tracebridge/core"
import { Either, Option } from "effect"
import type { Employee } from "./wire/Employee.js"
import type { Manifest, ManifestStop, ManifestStopItem, TransferLine } from "./wire/Manifest.js"
import type { Vehicle } from "./wire/Vehicle.js"

const normal = (text: string): string => text.trim().replace(/\s+/g, " ").toLowerCase()
const compact = (text: string): string => text.replace(/[^0-9a-z]/gi, "").toLowerCase()

/** The last row of each id, when it is live and not of another licence. */
const liveRows = <R extends { readonly deleted: boolean; readonly location: string | null }>(
  rows: ReadonlyArray<R>,
  idOf: (row: R) => string,
  license: string
): Array<R> => {
  const last = new Map<string, R>()
  for (const row of rows) last.set(idOf(row), row)
  return [...last.values()].filter((r) => !r.deleted && (r.location === null || r.location === license))
}

const exactlyOne = <R>(
  found: ReadonlyArray<R>,
  idOf: (row: R) => string,
  path: string,
  given: string,
  what: string,
  hint: string
): Either.Either<R, ProviderError.InvalidInput> => {
  if (found.length === 1) return Either.right(found[0]!)
  const message = found.length === 0
    ? `${path} ${JSON.stringify(given)} matches no BioTrack ${what} of this facility: ${hint}`
    : `${path} ${JSON.stringify(given)} matches several BioTrack ${what}s (${
      found.map(idOf).join(", ")
    }): send the ${what}'s id instead`
  return Either.left(new ProviderError.InvalidInput({ operation: "create_transfer", path, message }))
}

/** The employee `driver_name` names (`sync_employee` rows), or why there is not one. */
export const driver = (
  employees: ReadonlyArray<Employee>,
  license: string,
  driverName: string
): Either.Either<Employee, ProviderError.InvalidInput> => {
  const live = liveRows(employees, (e) => e.employee_id, license)
  const byId = live.filter((e) => e.employee_id === driverName.trim())
  const found = byId.length > 0
    ? byId
    : live.filter((e) => e.employee_name !== null && normal(e.employee_name) === normal(driverName))
  return exactlyOne(
    found,
    (e) => e.employee_id,
    "driver_name",
    driverName,
    "employee",
    "send an employee's name (as sync_employee lists it) or employee_id"
  )
}

const vehicleKeys = (v: Vehicle): Array<string> => {
  const joined = (...parts: ReadonlyArray<string | null>) =>
    parts.every((p) => p !== null && p.trim() !== "") ? [normal(parts.join(" "))] : []
  return [
    ...joined(v.nickname),
    ...joined(v.plate),
    ...joined(v.vin),
    ...joined(v.make, v.model),
    ...joined(v.color, v.make, v.model),
    ...joined(v.color, v.make, v.model, v.plate),
    ...joined(v.color, v.make, v.model, v.plate, v.vin)
  ]
}

/** The vehicle `vehicle_info` names (`sync_vehicle` rows), or why there is not one. */
export const vehicle = (
  vehicles: ReadonlyArray<Vehicle>,
  license: string,
  vehicleInfo: string
): Either.Either<Vehicle, ProviderError.InvalidInput> => {
  const live = liveRows(vehicles, (v) => v.vehicle_id, license)
  const byId = live.filter((v) => v.vehicle_id === vehicleInfo.trim())
  const wanted = normal(vehicleInfo)
  const bare = compact(vehicleInfo)
  const found = byId.length > 0 ? byId : live.filter((v) =>
    vehicleKeys(v).includes(wanted) ||
    (bare !== "" && [v.plate, v.vin].some((k) => k !== null && compact(k) === bare))
  )
  return exactlyOne(
    found,
    (v) => v.vehicle_id,
    "vehicle_info",
    vehicleInfo,
    "vehicle",
    "send a vehicle's id, nickname, plate, VIN or \"make model\" (as sync_vehicle lists it)"
  )
}

/** A manifest stop: where a transfer lives (`<manifestid>/<stopnumber>`). */
export interface StopRef {
  readonly manifestid: string
  readonly stopnumber: string
}

/** What a pending manifest must hold to be the one a `create_transfer` already made. */
export interface Wanted {
  /** The shipper's licence. */
  readonly license: string
  readonly recipient: string
  readonly barcodes: ReadonlyArray<string>
  /** The driver sent, if any: a manifest with another `transporter_id` is another manifest. */
  readonly employeeId: string | undefined
}

/**
 * The pending manifest (neither fulfilled, departed nor deleted) shipped from the licence with one
 * stop, to the recipient, holding exactly these barcodes; the newest when there are several.
 */
export const pendingManifest = (
  tables: {
    readonly manifest: ReadonlyArray<Manifest>
    readonly manifest_stop_data: ReadonlyArray<ManifestStop>
    readonly manifest_stop_items: ReadonlyArray<ManifestStopItem>
  },
  wanted: Wanted
): Option.Option<StopRef> => {
  const barcodes = [...new Set(wanted.barcodes)].sort().join(",")
  const headers = new Map<string, Manifest>()
  for (const m of tables.manifest) headers.set(m.manifestid, m)
  const found = [...headers.values()]
    .filter((m) =>
      !m.deleted && !m.fulfilled && m.completion_date === null &&
      m.origination_license_number === wanted.license &&
      (wanted.employeeId === undefined || m.transporter_id === null || m.transporter_id === wanted.employeeId)
    )
    .flatMap((m) => {
      const stops = tables.manifest_stop_data.filter((s) => s.manifestid === m.manifestid && !s.deleted)
      const stop = stops[0]
      if (stops.length !== 1 || stop!.license_number !== wanted.recipient) return []
      const items = tables.manifest_stop_items
        .filter((i) => i.manifestid === m.manifestid && i.stopnumber === stop!.stopnumber && !i.deleted)
        .map((i) => i.inventoryid)
      return [...new Set(items)].sort().join(",") === barcodes
        ? [{ manifest: m, ref: { manifestid: m.manifestid, stopnumber: stop!.stopnumber } }]
        : []
    })
    .sort((a, b) => Number(a.manifest.transactionid) - Number(b.manifest.transactionid))
  return Option.fromNullable(found.at(-1)?.ref)
}

/** The barcodes of `barcodes` that have no live outbound line on the manifest stop yet. */
export const missingLines = (
  lines: ReadonlyArray<TransferLine>,
  stop: StopRef,
  barcodes: ReadonlyArray<string>
): Array<string> => {
  const there = new Set(
    lines
      .filter((l) => !l.deleted && l.manifestid === stop.manifestid && l.manifest_stop === stop.stopnumber)
      .map((l) => l.inventoryid)
  )
  return barcodes.filter((b) => !there.has(b))
}
