/**
 * Calendar arithmetic on ISO strings, with no `Date` and no clock.
 */

const daysInMonth = (year: number, month: number): number => {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
    return leap ? 29 : 28
  }
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2}))$/

const validDate = (y: string, m: string, d: string): boolean => {
  const year = Number(y)
  const month = Number(m)
  const day = Number(d)
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
}

/** `YYYY-MM-DD` naming a real calendar day. */
export const isIsoDate = (s: string): boolean => {
  const m = DATE.exec(s)
  return m !== null && validDate(m[1]!, m[2]!, m[3]!)
}

/** `YYYY-MM-DDTHH:MM[:SS[.fff]]` followed by `Z` or a `±HH:MM` offset, naming a real instant. */
export const isIsoDateTime = (s: string): boolean => {
  const m = DATE_TIME.exec(s)
  if (m === null || !validDate(m[1]!, m[2]!, m[3]!)) return false
  const hour = Number(m[4])
  const minute = Number(m[5])
  const second = m[6] === undefined ? 0 : Number(m[6])
  if (hour > 23 || minute > 59 || second > 59) return false
  if (m[7] !== "Z" && (Number(m[8]) > 23 || Number(m[9]) > 59)) return false
  return true
}

/** Milliseconds since the epoch of an ISO date or date-time (a date means its UTC midnight). */
export const toEpochMillis = (s: string): number => Date.parse(s.length === 10 ? `${s}T00:00:00Z` : s)
