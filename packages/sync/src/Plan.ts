/**
 * Where a backfill starts and the windows it walks: pure arithmetic over epoch milliseconds.
 *
 * A backfill starts at the facility's licence start date or the history horizon, whichever is
 * later (DECISIONS). A provider that reads by modification time (its descriptor's
 * `syncWindowHours`) is walked in windows of that length, oldest first; each window's end is the
 * last whole second before the next one starts, so that a provider that counts in whole seconds
 * (Metrc) reads each window in one request per page and no second twice. A provider that hands
 * over whole tables is read in one window.
 *
 * @since 0.1.0
 */

/**
 * One window of modification time (both ends inclusive, epoch ms). `from` null reads from the
 * beginning.
 *
 * @since 0.1.0
 * @category models
 */
export interface Window {
  readonly from: number | null
  readonly to: number
}

const DAY = 86_400_000

/**
 * The first instant a backfill reads.
 *
 * @since 0.1.0
 * @category constructors
 */
export const startOf = (now: number, horizonDays: number, licenceStart: string | null): number => {
  const horizon = now - horizonDays * DAY
  const licence = licenceStart === null ? Number.NaN : Date.parse(licenceStart)
  return Number.isFinite(licence) ? Math.max(horizon, licence) : horizon
}

/**
 * The windows from `from` to `to`, oldest first; `windowHours` undefined gives one window from
 * the beginning.
 *
 * @since 0.1.0
 * @category constructors
 */
export const windows = (from: number, to: number, windowHours: number | undefined): ReadonlyArray<Window> => {
  if (windowHours === undefined) return [{ from: null, to }]
  const step = windowHours * 3_600_000
  const out: Array<Window> = []
  const first = Math.floor(from / 1000) * 1000
  for (let start = first; start <= to; start += step) {
    out.push({ from: start, to: Math.min(start + step - 1000, to) })
  }
  return out
}

/**
 * The window that holds `at`, in a walk from `from` (for resuming at a stored window start).
 *
 * @since 0.1.0
 * @category getters
 */
export const indexOf = (plan: ReadonlyArray<Window>, at: number | null): number => {
  if (at === null) return 0
  const i = plan.findIndex((w) => w.from !== null && w.from >= at)
  return i === -1 ? plan.length : i
}
