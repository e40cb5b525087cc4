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
 * The JSON of `data` objects seen before. Answers kept by a cache (the sandbox's read cache) hand
 * out the same `data` object again, so its text is made once; the per-request parts of an
 * envelope (`meta`, `pagination`) are stringified each time. Weak: nothing here outlives its data.
 */
const dataJson = new WeakMap<object, string>()

const stringifyData = (data: object): string => {
  let text = dataJson.get(data)
  if (text === undefined) {
    text = JSON.stringify(data)
    dataJson.set(data, text)
  }
  return text
}

/**
 * The JSON text of an envelope (`{data, …}` with `data` first), reusing the text of a `data`
 * object already stringified; the same bytes as `JSON.stringify(envelope)`.
 *
 * @since 0.1.0
 * @category encoding
 */
export const stringifyEnvelope = (envelope: unknown): string => {
  if (typeof envelope !== "object" || envelope === null) return JSON.stringify(envelope)
  const { data, ...rest } = envelope as { readonly data?: unknown }
  if (typeof data !== "object" || data === null || Object.keys(envelope)[0] !== "data") return JSON.stringify(envelope)
  const tail = JSON.stringify(rest)
  return tail === "{}" ? `{"data":${stringifyData(data)}}` : `{"data":${stringifyData(data)},${tail.slice(1)}`
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
    HttpServerResponse.text(encode === undefined ? stringifyEnvelope(value) : JSON.stringify(encode(value)), {
      status,
      contentType: "application/json"
    })
}
