/**
 * Metrc's dates and times, normalised:
 * - `0001-01-01` and `0001-01-01T00:00:00+00:00` (and empty strings) are placeholders for "none";
 * - dates come as `YYYY-MM-DD` or as a date-time whose date part is kept;
 * - timestamps come with an offset (`…+00:00`, `…-06:00`, `…Z`) or as local times without one
 *   (`2016-01-01T17:35:45.000`), which are read in the facility state's time zone.
 * Every date-time leaves as UTC ISO 8601 (`…Z`).
 */
import type { ProviderName } from "@tracebridge/core"
import { facts } from "./descriptor.js"

/** The IANA time zone of a state's local Metrc times, from the descriptor's facts (UTC when unknown). */
export const timeZoneOf = (state: string | undefined): string =>
  (state !== undefined ? facts.timeZones[state.toUpperCase() as ProviderName.UsState] : undefined) ?? "UTC"

const DATE = /^(\d{4})-(\d{2})-(\d{2})/
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/

const isPlaceholder = (s: string | null | undefined): s is null | undefined | "" =>
  s === null || s === undefined || s.trim() === "" || s.startsWith("0001-01-01")

/** Whether a string is a Metrc date or date-time (or a placeholder). */
export const isMetrcTime = (s: string): boolean =>
  isPlaceholder(s) || DATE_TIME.test(s) || /^\d{4}-\d{2}-\d{2}$/.test(s)

/** A Metrc date or date-time as an ISO date (`YYYY-MM-DD`), or null for a placeholder. */
export const toDate = (s: string | null | undefined): string | null => {
  if (isPlaceholder(s)) return null
  const m = DATE.exec(s)
  return m === null ? null : `${m[1]}-${m[2]}-${m[3]}`
}

const formatters = new Map<string, Intl.DateTimeFormat>()
const formatter = (timeZone: string) => {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit"
    })
    formatters.set(timeZone, f)
  }
  return f
}

/** The wall-clock time in `timeZone` at UTC instant `utc`, read as if it were UTC (ms). */
const wallClock = (utc: number, timeZone: string): number => {
  const parts: Record<string, number> = {}
  for (const p of formatter(timeZone).formatToParts(utc)) if (p.type !== "literal") parts[p.type] = Number(p.value)
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!) + (utc % 1000)
}

/** A Metrc date-time as UTC ISO 8601, or null for a placeholder. Local times are read in `timeZone`. */
export const toDateTime = (s: string | null | undefined, timeZone: string): string | null => {
  if (isPlaceholder(s)) return null
  const m = DATE_TIME.exec(s)
  if (m === null) {
    const d = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
    return d === null ? null : toDateTime(`${s}T00:00:00`, timeZone)
  }
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, "0"))
  const local = Date.UTC(
    Number(m[1]),
    Number(m[2]) - 1,
    Number(m[3]),
    Number(m[4]),
    Number(m[5]),
    Number(m[6] ?? 0),
    ms
  )
  const zone = m[8]
  if (zone !== undefined) {
    if (zone === "Z") return new Date(local).toISOString()
    const sign = zone[0] === "-" ? -1 : 1
    const digits = zone.slice(1).replace(":", "")
    const offset = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60_000
    return new Date(local - offset).toISOString()
  }
  if (timeZone === "UTC") return new Date(local).toISOString()
  // Local wall time → instant: guess with the offset at `local`, then correct once (DST edges).
  let guess = local - (wallClock(local, timeZone) - local)
  guess = local - (wallClock(guess, timeZone) - guess)
  return new Date(guess).toISOString()
}
