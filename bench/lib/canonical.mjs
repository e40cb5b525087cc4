// sha256 of a canonical JSON: object keys sorted, Maps as sorted [key, value] lists, undefined
// object members dropped (as JSON does). Streamed into the hash in 1 MB chunks, so that a
// 100 MB world is never one string.
import { createHash } from "node:crypto"

export const canonicalHash = (value) => {
  const hash = createHash("sha256")
  let buffer = ""
  const out = (s) => {
    buffer += s
    if (buffer.length > 1_048_576) {
      hash.update(buffer)
      buffer = ""
    }
  }
  const walk = (v) => {
    if (v === null || typeof v !== "object") {
      out(v === undefined ? "null" : JSON.stringify(v))
    } else if (Array.isArray(v)) {
      out("[")
      for (let i = 0; i < v.length; i++) {
        if (i > 0) out(",")
        walk(v[i])
      }
      out("]")
    } else if (v instanceof Map) {
      const entries = [...v.entries()].sort(([a], [b]) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0))
      out("{\"$map\":")
      walk(entries)
      out("}")
    } else if (v instanceof Set) {
      out("{\"$set\":")
      walk([...v].sort())
      out("}")
    } else {
      out("{")
      let first = true
      for (const key of Object.keys(v).sort()) {
        if (v[key] === undefined || typeof v[key] === "function") continue
        if (!first) out(",")
        first = false
        out(JSON.stringify(key))
        out(":")
        walk(v[key])
      }
      out("}")
    }
  }
  walk(value)
  hash.update(buffer)
  return hash.digest("hex")
}
