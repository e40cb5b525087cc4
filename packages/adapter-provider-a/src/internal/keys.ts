/**
 * Case-insensitive keys. Metrc documents PascalCase, but some states answer in camelCase (and
 * clients have met other casings), so every payload is rewritten to the canonical spelling of the
 * wire schemas before it is decoded. Unknown keys get an upper-case first letter.
 */
const canonicalByLower = new Map<string, string>()

/** Keys already spelled canonically (the common case), checked before any lower-casing. */
const canonical = new Set<string>()

/** Registers the canonical spelling of keys (every wire schema registers its field names). */
export const register = (keys: Iterable<string>): void => {
  for (const key of keys) {
    const lower = key.toLowerCase()
    const previous = canonicalByLower.get(lower)
    if (previous !== undefined) canonical.delete(previous)
    canonicalByLower.set(lower, key)
    canonical.add(key)
  }
}

const canonicalKey = (key: string): string =>
  canonical.has(key)
    ? key
    : canonicalByLower.get(key.toLowerCase()) ?? (key.length > 0 ? key[0]!.toUpperCase() + key.slice(1) : key)

/**
 * Rewrites every key of a JSON value (deeply) to its canonical spelling. Objects and arrays whose
 * keys are all canonical already (deeply) are returned as they are, not copied.
 */
export const canonicalize = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) {
    let out: Array<unknown> | undefined
    for (let i = 0; i < value.length; i++) {
      const item = value[i]
      const next = canonicalize(item)
      if (next !== item && out === undefined) out = value.slice(0, i)
      if (out !== undefined) out.push(next)
    }
    return out ?? value
  }
  const record = value as Record<string, unknown>
  let out: Record<string, unknown> | undefined
  for (const key in record) {
    const item = record[key]
    const next = canonicalize(item)
    const name = canonicalKey(key)
    if (out === undefined && (name !== key || next !== item)) {
      // The first change: copy what came before it (unchanged), then go on rewriting.
      out = {}
      for (const before in record) {
        if (before === key) break
        out[before] = record[before]
      }
    }
    if (out !== undefined) out[name] = next
  }
  return out ?? value
}
