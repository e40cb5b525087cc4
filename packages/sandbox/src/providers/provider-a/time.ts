/**
 * Metrc's three ways of writing a time, from the world's epoch milliseconds and ISO instants:
 *
 * - dates, `YYYY-MM-DD` (`PackagedDate`, `HarvestStartDate`, licence dates);
 * - instants with an offset, `2026-03-14T10:00:00+00:00` (`LastModified`, `ReceivedDateTime`,
 *   `RecordedDateTime`): the emulator writes them in UTC;
 * - local wall-clock times without an offset, `2026-03-14T04:00:00.000` (`SalesDateTime`,
 *   `Estimated…DateTime`), in the time zone of the state the system serves.
 *
 * `0001-01-01T00:00:00.000` is Metrc's placeholder for "none" where a local time is always present.
 * A local time names no instant in the hour a state's clocks go back (the first Sunday of
 * November, 1:00–2:00 twice): a reader takes one of the two, as with Metrc itself.
 */
import { ProviderA } from "@tracebridge/adapter-provider-a"

/** The IANA time zone of each state's Metrc instance (its local times are written in it): the descriptor's facts. */
const timeZones: Readonly<Partial<Record<string, string>>> = ProviderA.facts.timeZones

/** The placeholder Metrc writes for an unset local time. */
export const NO_LOCAL_TIME = "0001-01-01T00:00:00.000"

/** An instant (epoch ms), to the second, with Metrc's UTC offset: `2026-03-14T10:00:00+00:00`. */
export const instant = (ms: number): string =>
  new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "+00:00")

/** An ISO instant (`…Z`) with Metrc's UTC offset instead of `Z` (milliseconds dropped), or null. */
export const withOffset = (iso: string | null): string | null =>
  iso === null ? null : iso.replace(/\.\d{3}Z$/, "+00:00").replace(/Z$/, "+00:00")

const formatters = new Map<string, Intl.DateTimeFormat>()
const formatterOf = (timeZone: string): Intl.DateTimeFormat => {
  let formatter = formatters.get(timeZone)
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit"
    })
    formatters.set(timeZone, formatter)
  }
  return formatter
}

/**
 * An ISO instant as the wall-clock time of `state` without an offset, as Metrc writes its local
 * times (`2026-03-14T04:00:00.000`), or null. A state without a known zone gets UTC.
 */
export const local = (iso: string | null, state: string): string | null => {
  if (iso === null) return null
  const ms = Date.parse(iso)
  if (Number.isNaN(ms)) return null
  const timeZone = timeZones[state.toUpperCase()]
  if (timeZone === undefined) return new Date(ms).toISOString().replace(/Z$/, "")
  const parts: Record<string, string> = {}
  for (const part of formatterOf(timeZone).formatToParts(ms)) {
    if (part.type !== "literal") parts[part.type] = part.value
  }
  const millis = String(((ms % 1000) + 1000) % 1000).padStart(3, "0")
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}.${millis}`
}
