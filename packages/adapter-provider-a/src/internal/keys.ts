/**
 * Case-insensitive keys. Metrc documents PascalCase, but some states answer in camelCase (and
 * clients have met other casings), so every payload is rewritten to the canonical spelling of the
 * wire schemas before it is decoded. Unknown keys get an upper-case first letter.
 */
const canonicalByLower = new Map<string, string>()

/** Registers the canonical spelling of keys (every wire schema registers its field names). */
export const register = (keys: Iterable<string>): void => {
  for (const key of keys) canonicalByLower.set(key.toLowerCase(), key)
}

const canonicalKey = (key: string): string =>
  canonicalByLower.get(key.toLowerCase()) ?? (key.length > 0 ? key[0]!.toUpperCase() + key.slice(1) : key)

const needsRewrite = (record: Record<string, unknown>): boolean => {
  for (const key in record) {
    if (canonicalKey(key) !== key) return true
    const value = record[key]
    if (typeof value === "object" && value !== null) return true
  }
  return false
}

/** Rewrites every key of a JSON value (deeply) to its canonical spelling. */
export const canonicalize = (value: unknown): unknown => {
  if (Array.isArray(value)) {
    let changed = false
    const out = value.map((item) => {
      const next = canonicalize(item)
      if (next !== item) changed = true
      return next
    })
    return changed ? out : value
  }
  if (typeof value !== "object" || value === null) return value
  const record = value as Record<string, unknown>
  if (!needsRewrite(record)) return value
  const out: Record<string, unknown> = {}
  for (const key in record) out[canonicalKey(key)] = canonicalize(record[key])
  return out
}
