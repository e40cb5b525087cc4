/** Structural equality of JSON-like values, ignoring key order. */
export const deepEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return typeof a === "number" && typeof b === "number" && Number.isNaN(a) && Number.isNaN(b)
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bs = b as ReadonlyArray<unknown>
    return a.length === bs.length && a.every((x, i) => deepEqual(x, bs[i]))
  }
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  const bo = b as Record<string, unknown>
  const ao = a as Record<string, unknown>
  return ka.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && deepEqual(ao[k], bo[k]))
}

/** The first path at which two values differ, for messages. */
export const firstDifference = (a: unknown, b: unknown, path = ""): string | undefined => {
  if (deepEqual(a, b)) return undefined
  if (
    typeof a === "object" && typeof b === "object" && a !== null && b !== null && !Array.isArray(a) && !Array.isArray(b)
  ) {
    const ao = a as Record<string, unknown>
    const bo = b as Record<string, unknown>
    for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
      const d = firstDifference(ao[k], bo[k], path === "" ? k : `${path}.${k}`)
      if (d !== undefined) return d
    }
  }
  return `${path || "(root)"}: ${JSON.stringify(a)?.slice(0, 120)} vs ${JSON.stringify(b)?.slice(0, 120)}`
}
