import type { Ids } from "@tracebridge/core"
import { timeZoneOf } from "../time.js"

/** What every mapper needs besides the provider's JSON. */
export interface MapContext {
  /** The facility whose list returned the object. */
  readonly facility_id: string
  /** The connection's state, for local times without an offset (UTC when absent). */
  readonly state?: string | undefined
  /** Today (`YYYY-MM-DD`), for facility status; a facility is active when absent. */
  readonly today?: string | undefined
}

export const PROVIDER = "provider_a" as const

export const facilityIdOf = (ctx: MapContext): Ids.FacilityId => ctx.facility_id as Ids.FacilityId

export const zoneOf = (ctx: MapContext): string => timeZoneOf(ctx.state)

/** A field the core object cannot do without was missing: the payload is invalid there. */
export class MissingField extends Error {
  constructor(readonly path: string) {
    super(`missing ${path}`)
  }
}

export const required = <A>(value: A | null | undefined, path: string): A => {
  if (value === null || value === undefined || (typeof value === "string" && value.trim() === "")) {
    throw new MissingField(path)
  }
  return value
}

/** Empty strings are "none" in Metrc payloads. */
export const text = (value: string | null | undefined): string | null =>
  value === null || value === undefined || value.trim() === "" ? null : value

/** Labels from Metrc's comma-joined lists. */
export const splitLabels = (value: string | null | undefined): ReadonlyArray<string> =>
  value === null || value === undefined ? [] : value.split(",").map((s) => s.trim()).filter((s) => s.length > 0)

/** `Not Submitted` → `NotSubmitted`. */
export const labState = (value: string | null | undefined): string | null =>
  value === null || value === undefined || value.trim() === "" ? null : value.replace(/\s+/g, "")
