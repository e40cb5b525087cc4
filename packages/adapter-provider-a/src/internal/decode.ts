import { ProviderError } from "@tracebridge/core"
import type { ParseResult } from "effect"
import { Either, Option, Schema, SchemaAST } from "effect"
import { canonicalize } from "./keys.js"
import { MissingField } from "./mappers/context.js"

/**
 * A compiled decoder: the decoded value, or `FAIL`. Built once per wire schema from its AST, for
 * the node kinds the wire schemas use (structs, `optionalWith(…, { default })`, nullable unions,
 * arrays, keywords, literals and filters). It follows `ParseResult`'s decoding with the default
 * options step by step (the same checks, the same filters, the same output objects), without an
 * `Either` per node. It never reports why: on `FAIL` (and for a schema with any other node kind)
 * Effect's own decoder runs on the same input and gives the `ParseError`, so errors are unchanged.
 */
type Fast = (input: unknown) => unknown

/** The failure of a compiled decoder (a value no decoded JSON can be). */
const FAIL: unique symbol = Symbol.for("@tracebridge/adapter-provider-a/decode/FAIL")

const isRecord = (u: unknown): u is Record<PropertyKey, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const hasOwn = Object.prototype.hasOwnProperty

/** A compiled decoder of `ast`, or `undefined` when it holds a node kind not handled here. */
const compile = (ast: SchemaAST.AST, memo: Map<SchemaAST.AST, Fast | undefined>): Fast | undefined => {
  if (memo.has(ast)) return memo.get(ast)
  const out = compileNode(ast, memo)
  memo.set(ast, out)
  return out
}

const compileNode = (ast: SchemaAST.AST, memo: Map<SchemaAST.AST, Fast | undefined>): Fast | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => typeof u === "string" ? u : FAIL
    case "NumberKeyword":
      return (u) => typeof u === "number" ? u : FAIL
    case "BooleanKeyword":
      return (u) => typeof u === "boolean" ? u : FAIL
    case "UndefinedKeyword":
      return (u) => u === undefined ? u : FAIL
    case "UnknownKeyword":
    case "AnyKeyword":
      return (u) => u
    case "Literal": {
      const literal = ast.literal
      return (u) => u === literal ? u : FAIL
    }
    case "Refinement": {
      const from = compile(ast.from, memo)
      if (from === undefined) return undefined
      return (u) => {
        const a = from(u)
        if (a === FAIL) return FAIL
        return Option.isNone(ast.filter(a, SchemaAST.defaultParseOption, ast)) ? a : FAIL
      }
    }
    case "Union": {
      const members: Array<Fast> = []
      for (const member of ast.types) {
        const m = compile(member, memo)
        if (m === undefined) return undefined
        members.push(m)
      }
      // Effect picks a member by its own ordering; the result is the same whenever exactly one
      // member accepts the input, so anything else is left to Effect.
      return (u) => {
        let found: unknown = FAIL
        for (const m of members) {
          const a = m(u)
          if (a === FAIL) continue
          if (found !== FAIL) return FAIL
          found = a
        }
        return found
      }
    }
    case "TupleType": {
      if (ast.elements.length !== 0 || ast.rest.length !== 1) return undefined
      const item = compile(ast.rest[0]!.type, memo)
      if (item === undefined) return undefined
      return (u) => {
        if (!Array.isArray(u)) return FAIL
        const len = u.length
        const output = new Array(len)
        for (let i = 0; i < len; i++) {
          const a = item(u[i])
          if (a === FAIL) return FAIL
          output[i] = a
        }
        return output
      }
    }
    case "TypeLiteral": {
      if (ast.indexSignatures.length > 0) return undefined
      const names: Array<string> = []
      const optional: Array<boolean> = []
      const parsers: Array<Fast> = []
      for (const ps of ast.propertySignatures) {
        if (typeof ps.name !== "string") return undefined
        const p = compile(ps.type, memo)
        if (p === undefined) return undefined
        names.push(ps.name)
        optional.push(ps.isOptional)
        parsers.push(p)
      }
      const n = names.length
      return (u) => {
        if (!isRecord(u)) return FAIL
        const output: Record<string, unknown> = {}
        for (let i = 0; i < n; i++) {
          const name = names[i]!
          if (optional[i] && !hasOwn.call(u, name)) continue
          const a = parsers[i]!(u[name])
          if (a === FAIL) return FAIL
          output[name] = a
        }
        return output
      }
    }
    case "Transformation": {
      const transformation = ast.transformation
      if (transformation._tag !== "TypeLiteralTransformation") return undefined
      const from = compile(ast.from, memo)
      const to = compile(ast.to, memo)
      if (from === undefined || to === undefined) return undefined
      const steps = transformation.propertySignatureTransformations
      const fused = fuse(ast, memo)
      if (fused !== undefined) return fused
      return (u) => {
        const a = from(u) as Record<PropertyKey, unknown> | typeof FAIL
        if (a === FAIL) return FAIL
        for (const step of steps) {
          const o = step.decode(hasOwn.call(a, step.from) ? Option.some(a[step.from]) : Option.none())
          if (step.from !== step.to || Option.isNone(o)) delete a[step.from]
          if (Option.isSome(o)) a[step.to] = o.value
        }
        return to(a)
      }
    }
    default:
      return undefined
  }
}

/** Whether `ast` only checks (no transformation inside): its decoded value equals its input. */
const checksOnly = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "Refinement":
      return checksOnly(ast.from)
    case "Union":
      return ast.types.every(checksOnly)
    case "TupleType":
      return ast.elements.every((e) => checksOnly(e.type)) && ast.rest.every((r) => checksOnly(r.type))
    case "TypeLiteral":
      return ast.propertySignatures.every((ps) => checksOnly(ps.type))
    case "Transformation":
    case "Declaration":
    case "Suspend":
      return false
    default:
      return true
  }
}

/**
 * A guard for a node that only checks, with no output of its own (keywords, literals, filters on
 * them, and unions of these): a JavaScript expression over `v`, whose filters are called from
 * `refinements`. `undefined` for any other node.
 */
const guardOf = (ast: SchemaAST.AST, refinements: Array<(u: unknown) => boolean>): string | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return `typeof v === "string"`
    case "NumberKeyword":
      return `typeof v === "number"`
    case "BooleanKeyword":
      return `typeof v === "boolean"`
    case "UndefinedKeyword":
      return `v === undefined`
    case "UnknownKeyword":
    case "AnyKeyword":
      return `true`
    case "Literal":
      return ast.literal === null || typeof ast.literal === "string" || typeof ast.literal === "boolean" ||
          (typeof ast.literal === "number" && Number.isFinite(ast.literal))
        ? `v === ${JSON.stringify(ast.literal)}`
        : undefined
    case "Refinement": {
      const from = guardOf(ast.from, refinements)
      if (from === undefined) return undefined
      const k = refinements.length
      refinements.push((u) => Option.isNone(ast.filter(u, SchemaAST.defaultParseOption, ast)))
      return `(${from} && R[${k}](v))`
    }
    case "Union": {
      // Every member gives back its input, so whichever member Effect picks, the output is the same.
      const members = ast.types.map((t) => guardOf(t, refinements))
      return members.every((m) => m !== undefined) ? `(${members.join(" || ")})` : undefined
    }
    default:
      return undefined
  }
}

/** The field names a generated decoder may spell as object literal keys. */
const plainName = (name: PropertyKey): name is string => typeof name === "string" && name !== "__proto__"

/**
 * A struct with `optionalWith` fields (a `Transformation` of two `TypeLiteral`s by property steps
 * that each keep their key), generated once as one function: the encoded side's checks, the steps
 * and the type side's checks in one pass over named properties, without the intermediate object
 * (and its `delete`s) and without a call per primitive check. A field whose type side is its
 * encoded side without `undefined` (`X | undefined` → `X`) and whose value the encoded side
 * accepted as it is (not `undefined`) is not checked again: that check cannot fail.
 */
const fuse = (ast: SchemaAST.Transformation, memo: Map<SchemaAST.AST, Fast | undefined>): Fast | undefined => {
  const transformation = ast.transformation
  if (transformation._tag !== "TypeLiteralTransformation") return undefined
  if (ast.from._tag !== "TypeLiteral" || ast.to._tag !== "TypeLiteral") return undefined
  if (ast.from.indexSignatures.length > 0 || ast.to.indexSignatures.length > 0) return undefined
  const stepOf = new Map<PropertyKey, number>()
  const S: Array<(o: Option.Option<unknown>) => Option.Option<unknown>> = []
  for (const step of transformation.propertySignatureTransformations) {
    if (step.from !== step.to || stepOf.has(step.to)) return undefined
    stepOf.set(step.to, S.length)
    S.push(step.decode)
  }
  const F: Array<Fast> = []
  const T: Array<Fast> = []
  const R: Array<(u: unknown) => boolean> = []
  /** A statement that checks (or decodes) `v`, returning FAIL when it does not pass. */
  const check = (type: SchemaAST.AST, into: Array<Fast>): string | undefined => {
    const guard = guardOf(type, R)
    if (guard !== undefined) return guard === "true" ? "" : `if (!(${guard})) return FAIL;`
    const parser = compile(type, memo)
    if (parser === undefined) return undefined
    into.push(parser)
    return `v = ${into === F ? "F" : "T"}[${into.length - 1}](v); if (v === FAIL) return FAIL;`
  }
  const lines: Array<string> = [
    `if (typeof u !== "object" || u === null || Array.isArray(u)) return FAIL;`,
    `let v, o;`
  ]
  const indexOf = new Map<string, number>()
  const fromTypes: Array<SchemaAST.AST> = []
  for (const ps of ast.from.propertySignatures) {
    if (!plainName(ps.name)) return undefined
    const j = fromTypes.length
    const key = JSON.stringify(ps.name)
    const c = check(ps.type, F)
    if (c === undefined) return undefined
    indexOf.set(ps.name, j)
    fromTypes.push(ps.type)
    // h<j>: the intermediate object has the key; v<j>: its value.
    lines.push(
      ps.isOptional
        ? ps.name in Object.prototype
          ? `const h${j} = hasOwn.call(u, ${key}); v = h${j} ? u[${key}] : undefined; if (h${j}) { ${c} } const v${j} = v;`
          : `v = u[${key}]; const h${j} = v !== undefined || hasOwn.call(u, ${key}); if (h${j}) { ${c} } const v${j} = v;`
        : `v = u[${key}]; const h${j} = true; ${c} const v${j} = v;`
    )
  }
  const out: Array<string> = []
  let omittable = false
  for (const ps of ast.to.propertySignatures) {
    if (!plainName(ps.name)) return undefined
    const i = out.length
    const j = indexOf.get(ps.name)
    const step = stepOf.get(ps.name)
    const c = check(ps.type, T)
    if (c === undefined) return undefined
    const fromType = j === undefined ? undefined : fromTypes[j]!
    const implied = checksOnly(ps.type) && fromType !== undefined &&
      (fromType === ps.type ||
        (fromType._tag === "Union" && fromType.types.length === 2 && fromType.types[0] === ps.type &&
          fromType.types[1]!._tag === "UndefinedKeyword"))
    const had = j === undefined ? "false" : `h${j}`
    const decoded = j === undefined ? "undefined" : `v${j}`
    // p<i>: the output has the key; x<i>: its value.
    lines.push(`let p${i} = ${had}; v = ${decoded};`)
    if (step !== undefined) {
      lines.push(`o = S[${step}](${had} ? some(v) : none()); p${i} = isSome(o); v = p${i} ? o.value : undefined;`)
    }
    if (ps.isOptional) omittable = true
    const skip = implied ? `${had} && v !== undefined && v === ${decoded}` : "false"
    lines.push(
      ps.isOptional
        ? `if (p${i} && !(${skip})) { ${c} } const x${i} = v;`
        : `if (!(${skip})) { ${c} } const x${i} = v;`
    )
    out.push(ps.name)
  }
  if (omittable) {
    lines.push(`const out = {};`)
    ast.to.propertySignatures.forEach((ps, i) => {
      lines.push(
        ps.isOptional
          ? `if (p${i}) out[${JSON.stringify(ps.name)}] = x${i};`
          : `out[${JSON.stringify(ps.name)}] = x${i};`
      )
    })
    lines.push(`return out;`)
  } else {
    lines.push(`return { ${out.map((name, i) => `${JSON.stringify(name)}: x${i}`).join(", ")} };`)
  }
  // Compiled once per schema, from the schema's own field names (JSON-quoted) and nothing else.
  const make = new Function(
    "F",
    "T",
    "S",
    "R",
    "FAIL",
    "hasOwn",
    "some",
    "none",
    "isSome",
    `"use strict"; return function decode(u) { ${lines.join("\n")} }`
  )
  return make(F, T, S, R, FAIL, hasOwn, Option.some, Option.none, Option.isSome) as Fast
}

interface Decoder<A> {
  readonly fast: ((input: unknown) => A | typeof FAIL) | undefined
  readonly slow: (input: unknown) => Either.Either<A, ParseResult.ParseError>
}

const decoders = new WeakMap<Schema.Schema<any, any>, Decoder<any>>()

/** The decoders of a schema, compiled on first use and kept. */
const decoderOf = <A, I>(schema: Schema.Schema<A, I>): Decoder<A> => {
  let decoder = decoders.get(schema)
  if (decoder === undefined) {
    decoder = {
      fast: compile(schema.ast, new Map()) as Decoder<A>["fast"],
      slow: Schema.decodeUnknownEither(schema)
    }
    decoders.set(schema, decoder)
  }
  return decoder
}

/**
 * Decodes JSON with a schema: the compiled decoder when it accepts the input, Effect's decoder
 * otherwise (which fails with the `ParseError`, or decodes what the compiled one left to it).
 * Exported for the tests, which hold both to the same results.
 */
export const decodeCompiled = <A, I>(schema: Schema.Schema<A, I>) => {
  const { fast, slow } = decoderOf(schema)
  return (input: unknown): Either.Either<A, ParseResult.ParseError> => {
    if (fast !== undefined) {
      const a = fast(input)
      if (a !== FAIL) return Either.right(a)
    }
    return slow(input)
  }
}

/** Whether the compiled decoder handles every node of `schema` (for the tests). */
export const isCompiled = (schema: Schema.Schema<any, any>): boolean => decoderOf(schema).fast !== undefined

/**
 * Decodes provider JSON (any key casing) with a wire schema; failures name the field. The
 * decoders are compiled once per schema, however often this is called.
 */
export const decodeWire = <A, I>(schema: Schema.Schema<A, I>, operation: string) => {
  const decode = decodeCompiled(schema)
  return (raw: unknown): Either.Either<A, ProviderError.ProviderInvalidResponse> =>
    Either.mapLeft(
      decode(canonicalize(raw)),
      (error) => ProviderError.ProviderInvalidResponse.fromParseError({ provider: "provider_a", operation, error })
    )
}

/** Runs a mapper, turning a missing required field into `ProviderInvalidResponse`. */
export const mapWire =
  <A, B>(operation: string, map: (a: A) => B) => (a: A): Either.Either<B, ProviderError.ProviderInvalidResponse> => {
    try {
      return Either.right(map(a))
    } catch (e) {
      if (e instanceof MissingField) {
        return Either.left(
          new ProviderError.ProviderInvalidResponse({
            provider: "provider_a",
            operation,
            path: e.path,
            message: `provider_a answered ${operation} without ${e.path}`
          })
        )
      }
      throw e
    }
  }

/** Checks a mapped object against its core schema (exact fields). */
export const checkCore = <A>(schema: Schema.Schema<A, any>, operation: string) => {
  const validate = Schema.validateEither(schema, { onExcessProperty: "error" })
  return (value: A): Either.Either<A, ProviderError.ProviderInvalidResponse> =>
    Either.mapLeft(
      validate(value),
      (error: ParseResult.ParseError) =>
        ProviderError.ProviderInvalidResponse.fromParseError({ provider: "provider_a", operation, error })
    )
}
