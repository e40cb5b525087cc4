/**
 * Answers encoded once: a handler that returns a value makes HttpApi run the endpoint's success
 * schema over it (a full parse of every field) before `JSON.stringify`. For the schemas whose
 * encoding is the identity (no transformations anywhere: only structs, arrays, unions, literals,
 * primitives and refinements), the value a handler holds, already checked by core, already is its
 * encoded form, so this module stringifies it directly and hands HttpApi a finished response,
 * which HttpApi passes through untouched. Any other schema is encoded with its compiled encoder
 * (built once per schema, not per request). The contract, and so the OpenAPI document, is not
 * changed by any of this.
 *
 * @since 0.1.0
 */
import { HttpServerResponse } from "@effect/platform"
import type { Schema, SchemaAST } from "effect"
import { Schema as S } from "effect"

/**
 * Whether decoding and encoding with this AST leave a value as it is: no `Transformation` or
 * `Declaration` (a custom type with its own codec) anywhere in it.
 *
 * @since 0.1.0
 * @category encoding
 */
export const isIdentity = (ast: SchemaAST.AST, seen: Set<SchemaAST.AST> = new Set()): boolean => {
  if (seen.has(ast)) return true
  seen.add(ast)
  switch (ast._tag) {
    case "Transformation":
    case "Declaration":
      return false
    case "Refinement":
      return isIdentity(ast.from, seen)
    case "Suspend":
      return isIdentity(ast.f(), seen)
    case "Union":
      return ast.types.every((t) => isIdentity(t, seen))
    case "TupleType":
      return ast.elements.every((e) => isIdentity(e.type, seen)) && ast.rest.every((r) => isIdentity(r.type, seen))
    case "TypeLiteral":
      return ast.propertySignatures.every((p) => isIdentity(p.type, seen)) &&
        ast.indexSignatures.every((i) => isIdentity(i.type, seen))
    default:
      return true
  }
}

/**
 * The UTF-8 bytes of `{"data":<json>` for `data` objects seen before. Answers kept by a cache (the
 * sandbox's read cache) hand out the same `data` object again, so its text is made and encoded
 * once; the per-request parts of an envelope (`meta`, `pagination`) are stringified each time and
 * appended. Weak: nothing here outlives its data.
 */
const dataHeads = new WeakMap<object, Uint8Array>()
const encoder = new TextEncoder()

const headOf = (data: object): Uint8Array => {
  let head = dataHeads.get(data)
  if (head === undefined) {
    head = encoder.encode(`{"data":${JSON.stringify(data)}`)
    dataHeads.set(data, head)
  }
  return head
}

/**
 * The JSON of an envelope (`{data, …}` with `data` first) as UTF-8 bytes, reusing the bytes of a
 * `data` object already encoded; the same bytes as encoding `JSON.stringify(envelope)`.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeEnvelope = (envelope: unknown): Uint8Array => {
  if (typeof envelope !== "object" || envelope === null) return encoder.encode(JSON.stringify(envelope))
  const { data, ...rest } = envelope as { readonly data?: unknown }
  if (typeof data !== "object" || data === null || Object.keys(envelope)[0] !== "data") {
    return encoder.encode(JSON.stringify(envelope))
  }
  const head = headOf(data)
  const tail = JSON.stringify(rest)
  const end = encoder.encode(tail === "{}" ? "}" : `,${tail.slice(1)}`)
  const bytes = new Uint8Array(head.length + end.length)
  bytes.set(head, 0)
  bytes.set(end, head.length)
  return bytes
}

/**
 * A function from a schema's values (envelopes) to finished JSON responses (`status`, default 200).
 *
 * @since 0.1.0
 * @category encoding
 */
export const responder = <A, I>(schema: Schema.Schema<A, I>) => {
  const identity = isIdentity(schema.ast)
  const encode = identity ? undefined : S.encodeSync(schema)
  return (value: A, status = 200): HttpServerResponse.HttpServerResponse =>
    encode === undefined
      ? HttpServerResponse.uint8Array(encodeEnvelope(value), { status, contentType: "application/json" })
      : HttpServerResponse.text(JSON.stringify(encode(value)), { status, contentType: "application/json" })
}
