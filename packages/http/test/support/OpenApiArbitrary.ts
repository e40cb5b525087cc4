/**
 * JSON Schema (the OpenAPI 3.1 dialect that `OpenApi.fromApi` emits) to fast-check arbitraries, for
 * the fuzzer: `valid` values follow the schema, `mutated` values are valid ones broken in one place
 * (a required property dropped, a property of the wrong type, an unknown property, a huge or empty
 * string, a null, nested junk, or a body that is not an object at all).
 *
 * Supported: `$ref` into `components.schemas` (recursion cut at a depth limit), `type` (and arrays of
 * types), `enum`, `const`, `anyOf`/`oneOf`/`allOf` (objects merged), `properties`/`required` (the
 * optional properties present or absent), `additionalProperties`, `patternProperties`,
 * `propertyNames`, `minLength`/`maxLength`, `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum`
 * (numbers or the 3.0 booleans), `minItems`/`maxItems`, `items`/`prefixItems`, `format` (date-time,
 * date, uri/url, email, uuid) and `pattern` (with `fc.stringMatching` when it compiles). Sizes stay
 * small: arrays of at most {@link Options.maxItems} extra items, short strings.
 *
 * It does not use effect's `Arbitrary.make`, which spins forever on the filters of some schemas.
 */
import fc from "fast-check"

/** A JSON Schema object, loosely typed: the documents are data. */
export type JsonSchema = boolean | { readonly [keyword: string]: any }

export interface Options {
  /** `components.schemas` of the document, for `$ref`. */
  readonly components?: Readonly<Record<string, JsonSchema>>
  /** How many `$ref`s deep to follow before answering the simplest value (default 6). */
  readonly maxDepth?: number
  /** At most this many items above `minItems` in an array (default 5). */
  readonly maxItems?: number
  /** At most this many characters above `minLength` in a string without a `pattern` (default 24). */
  readonly maxLength?: number
  /** The range of `date-time` and `date` values (default 1970 to 2100). */
  readonly dates?: { readonly min: Date; readonly max: Date }
  /**
   * Values worth mixing in for a property of this name (a real package id for `package_id`, say),
   * half of the time; the generated ones the other half.
   */
  readonly hint?: (property: string) => fc.Arbitrary<unknown> | undefined
}

export type Mode = "valid" | "mutated"

const isObject = (value: unknown): value is Record<string, any> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 2, depthSize: "small" })

/** Resolves a `$ref` (and merges the keywords next to it, as 3.1 allows); undefined past the depth limit. */
const resolve = (schema: Record<string, any>, options: Options, depth: number): Record<string, any> | undefined => {
  if (typeof schema["$ref"] !== "string") return schema
  if (depth >= (options.maxDepth ?? 6)) return undefined
  const ref: string = schema["$ref"]
  const name = ref.startsWith("#/components/schemas/") ? decodeURIComponent(ref.slice(21)) : undefined
  const target = name === undefined ? undefined : options.components?.[name]
  const { $ref: _, ...siblings } = schema
  if (target === undefined || typeof target === "boolean") return target === false ? { not: {} } : siblings
  return resolve({ ...target, ...siblings }, options, depth + 1)
}

/** `allOf`: the parts merged into one schema (properties and required lists combined). */
const mergeAll = (parts: ReadonlyArray<JsonSchema>, options: Options, depth: number): Record<string, any> => {
  const merged: Record<string, any> = {}
  for (const part of parts) {
    if (typeof part === "boolean") continue
    const resolved = resolve(part, options, depth)
    if (resolved === undefined) continue
    const flat = Array.isArray(resolved["allOf"])
      ? { ...resolved, ...mergeAll(resolved["allOf"], options, depth + 1), allOf: undefined }
      : resolved
    for (const [key, value] of Object.entries(flat)) {
      if (value === undefined) continue
      if (key === "properties") merged["properties"] = { ...merged["properties"], ...value }
      else if (key === "required") merged["required"] = [...new Set([...(merged["required"] ?? []), ...value])]
      else if (key === "additionalProperties" && merged[key] === false) continue
      else merged[key] = value
    }
  }
  return merged
}

const typesOf = (schema: Record<string, any>): ReadonlyArray<string> => {
  const type = schema["type"]
  if (Array.isArray(type)) return type
  if (typeof type === "string") return [type]
  if (isObject(schema["properties"]) || schema["additionalProperties"] !== undefined) return ["object"]
  if (schema["items"] !== undefined || schema["prefixItems"] !== undefined) return ["array"]
  if (schema["pattern"] !== undefined || schema["format"] !== undefined || schema["minLength"] !== undefined) {
    return ["string"]
  }
  return []
}

const compile = (pattern: string): RegExp | undefined => {
  try {
    return new RegExp(pattern)
  } catch {
    return undefined
  }
}

const dateArbitrary = (options: Options) =>
  fc.date({
    min: options.dates?.min ?? new Date("1970-01-01T00:00:00.000Z"),
    max: options.dates?.max ?? new Date("2100-12-31T23:59:59.999Z"),
    noInvalidDate: true
  })

const stringArbitrary = (schema: Record<string, any>, options: Options): fc.Arbitrary<string> => {
  const minLength: number = schema["minLength"] ?? 0
  const maxLength: number = Math.min(schema["maxLength"] ?? Infinity, minLength + (options.maxLength ?? 24))
  const fit = (arbitrary: fc.Arbitrary<string>) =>
    arbitrary.map((value) =>
      value.length > (schema["maxLength"] ?? Infinity) ? value.slice(0, schema["maxLength"]) : value
    )
  switch (schema["format"]) {
    case "date-time":
      return dateArbitrary(options).map((date) => date.toISOString())
    case "date":
      return dateArbitrary(options).map((date) => date.toISOString().slice(0, 10))
    case "uri":
    case "url":
      return fit(fc.webUrl({ size: "small" }))
    case "email":
      return fit(fc.emailAddress({ size: "small" }))
    case "uuid":
      return fc.uuid()
  }
  if (typeof schema["pattern"] === "string") {
    const regexp = compile(schema["pattern"])
    if (regexp !== undefined) {
      return fit(fc.stringMatching(regexp, { size: "small" })).map((value) =>
        value.length < minLength ? value.padEnd(minLength, value.slice(-1) || "a") : value
      )
    }
  }
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength, maxLength, size: "small" }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength, maxLength, size: "small" }) }
  )
}

const bound = (schema: Record<string, any>) => {
  const exclusiveMinimum = schema["exclusiveMinimum"]
  const exclusiveMaximum = schema["exclusiveMaximum"]
  // 3.1: the exclusive bounds are numbers; 3.0: booleans qualifying minimum and maximum.
  const min: number | undefined = typeof exclusiveMinimum === "number" ? exclusiveMinimum : schema["minimum"]
  const max: number | undefined = typeof exclusiveMaximum === "number" ? exclusiveMaximum : schema["maximum"]
  const minExcluded = typeof exclusiveMinimum === "number" || exclusiveMinimum === true
  const maxExcluded = typeof exclusiveMaximum === "number" || exclusiveMaximum === true
  return { min, max, minExcluded: minExcluded && min !== undefined, maxExcluded: maxExcluded && max !== undefined }
}

const integerArbitrary = (schema: Record<string, any>): fc.Arbitrary<number> => {
  const { max, maxExcluded, min, minExcluded } = bound(schema)
  const low = min === undefined ? undefined : minExcluded ? Math.floor(min) + 1 : Math.ceil(min)
  const high = max === undefined ? undefined : maxExcluded ? Math.ceil(max) - 1 : Math.floor(max)
  return fc.integer({
    min: Math.max(low ?? -1_000_000, Number.MIN_SAFE_INTEGER),
    max: Math.min(high ?? Math.max(1_000_000, (low ?? 0) + 1_000_000), Number.MAX_SAFE_INTEGER)
  })
}

const numberArbitrary = (schema: Record<string, any>): fc.Arbitrary<number> => {
  const { max, maxExcluded, min, minExcluded } = bound(schema)
  return fc.double({
    noNaN: true,
    noDefaultInfinity: true,
    ...(min === undefined ? {} : { min, minExcluded }),
    ...(max === undefined ? {} : { max, maxExcluded })
  }).map((value) => (Object.is(value, -0) ? 0 : value))
}

const withHint = (name: string, arbitrary: fc.Arbitrary<unknown>, options: Options): fc.Arbitrary<unknown> => {
  const hint = options.hint?.(name)
  return hint === undefined ? arbitrary : fc.oneof(arbitrary, hint)
}

const objectArbitrary = (schema: Record<string, any>, options: Options, depth: number): fc.Arbitrary<unknown> => {
  const properties: Record<string, JsonSchema> = isObject(schema["properties"]) ? schema["properties"] : {}
  const required = new Set<string>(Array.isArray(schema["required"]) ? schema["required"] : [])
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [name, property] of Object.entries(properties)) {
    model[name] = withHint(name, valid(property, options, depth + 1), options)
  }
  // Properties named by `required` but not described are still sent.
  for (const name of required) if (model[name] === undefined) model[name] = withHint(name, anyJson, options)
  const known = fc.record(model, { requiredKeys: [...required].filter((name) => model[name] !== undefined) })
  // Extra properties only where the schema describes them (`additionalProperties: {...}`, `patternProperties`).
  const additional = schema["additionalProperties"]
  const patterns = isObject(schema["patternProperties"]) ? Object.values(schema["patternProperties"]) : []
  const extraValue = isObject(additional) ? additional : patterns.length > 0 ? { anyOf: patterns } : undefined
  if (extraValue === undefined) return known
  const names = isObject(schema["propertyNames"])
    ? valid({ type: "string", ...schema["propertyNames"] }, options, depth + 1) as fc.Arbitrary<string>
    : fc.string({ minLength: 1, maxLength: 10 })
  const extras = fc.dictionary(names, valid(extraValue, options, depth + 1), { maxKeys: 3 })
  return fc.tuple(extras, known).map(([more, fixed]) => ({ ...more, ...(fixed as object) }))
}

const arrayArbitrary = (schema: Record<string, any>, options: Options, depth: number): fc.Arbitrary<unknown> => {
  const minItems: number = schema["minItems"] ?? 0
  const cap = Math.min(schema["maxItems"] ?? Infinity, minItems + (options.maxItems ?? 5))
  const prefix: ReadonlyArray<JsonSchema> = Array.isArray(schema["prefixItems"]) ? schema["prefixItems"] : []
  const items: JsonSchema | undefined = schema["items"]
  const rest = items === false ? undefined : valid(items ?? true, options, depth + 1)
  const tail = rest === undefined
    ? fc.constant([])
    : fc.array(rest, { minLength: Math.max(0, minItems - prefix.length), maxLength: Math.max(0, cap - prefix.length) })
  return fc.tuple(fc.tuple(...prefix.map((item) => valid(item, options, depth + 1))), tail)
    .map(([head, more]) => [...head, ...more])
}

const ofType = (type: string, schema: Record<string, any>, options: Options, depth: number): fc.Arbitrary<unknown> => {
  switch (type) {
    case "string":
      return stringArbitrary(schema, options)
    case "integer":
      return integerArbitrary(schema)
    case "number":
      return numberArbitrary(schema)
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "array":
      return arrayArbitrary(schema, options, depth)
    case "object":
      return objectArbitrary(schema, options, depth)
    default:
      return anyJson
  }
}

/** A value the schema accepts (as far as JSON Schema can say: refinements it does not express are not known). */
export const valid = (schema: JsonSchema, options: Options = {}, depth = 0): fc.Arbitrary<unknown> => {
  if (schema === true) return anyJson
  if (schema === false) return fc.constant(undefined)
  const resolved = resolve(schema, options, depth)
  // Past the depth limit: the simplest value there is.
  if (resolved === undefined) return fc.constant(null)
  if ("const" in resolved) return fc.constant(resolved["const"])
  if (Array.isArray(resolved["enum"]) && resolved["enum"].length > 0) return fc.constantFrom(...resolved["enum"])
  if (Array.isArray(resolved["allOf"]) && resolved["allOf"].length > 0) {
    const { allOf, ...rest } = resolved
    return valid(mergeAll([rest, ...allOf], options, depth), options, depth + 1)
  }
  const choices = resolved["anyOf"] ?? resolved["oneOf"]
  if (Array.isArray(choices) && choices.length > 0) {
    const { anyOf: _a, oneOf: _o, ...rest } = resolved
    const own = Object.keys(rest).some((key) => !["description", "title", "$id", "default", "examples"].includes(key))
    return fc.oneof(
      ...choices.map((choice: JsonSchema) =>
        valid(
          own && typeof choice !== "boolean" ? mergeAll([rest, choice], options, depth) : choice,
          options,
          depth + 1
        )
      )
    )
  }
  const types = typesOf(resolved)
  if (types.length === 0) return anyJson
  return types.length === 1
    ? ofType(types[0]!, resolved, options, depth)
    : fc.oneof(...types.map((type) => ofType(type, resolved, options, depth)))
}

// ---------------------------------------------------------------------------------------------------
// Mutations

/** Strings that stress a decoder: empty, blank, long, over the JSON string limit, control and bidi characters. */
export const oddStrings: fc.Arbitrary<string> = fc.constantFrom(
  "",
  " ",
  "\u0000",
  "é\u202e🧪",
  "\ud800",
  "x".repeat(10_000),
  "x".repeat(200_000),
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  "2026-13-45T99:99:99Z",
  "NaN",
  "1e308"
)

const deepNest = (depth: number): unknown => {
  let value: unknown = "junk"
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value }
  return value
}

/** Nested junk: deep arrays and objects, prototype keys, operator objects. */
export const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    deepNest(8),
    deepNest(200),
    [[[[]]]],
    { $ne: null },
    { $gt: "" },
    JSON.parse("{\"__proto__\":{\"polluted\":true}}"),
    { constructor: { prototype: { polluted: true } } },
    [null, {}, [], ""]
  ),
  fc.jsonValue({ maxDepth: 3, depthSize: "small" })
)

/** A value of another JSON type than this one. */
const wrongType = (value: unknown): fc.Arbitrary<unknown> => {
  if (typeof value === "string") {
    return fc.oneof(fc.integer(), fc.boolean(), fc.constant([value]), fc.constant({ value }))
  }
  if (typeof value === "number") {
    return fc.oneof(fc.constant(String(value)), fc.boolean(), fc.constant([value]), fc.constantFrom(1e308, -1e308))
  }
  if (typeof value === "boolean") return fc.constantFrom(String(value), 1, 0, [value])
  if (Array.isArray(value)) return fc.oneof(fc.constant({ ...value }), fc.constant(value.length), fc.constant("[]"))
  if (isObject(value)) return fc.constantFrom<unknown>([value], JSON.stringify(value), 1, true)
  return fc.oneof(fc.constant({}), fc.constant([]), fc.string({ maxLength: 5 }), fc.integer())
}

type Path = ReadonlyArray<string | number>

/** Every place in a value (up to 3 levels deep) a mutation can go: the value itself, then its members. */
const places = (value: unknown, path: Path = [], out: Array<Path> = []): Array<Path> => {
  out.push(path)
  if (path.length >= 3) return out
  if (Array.isArray(value)) value.forEach((item, index) => places(item, [...path, index], out))
  else if (isObject(value)) { for (const [key, member] of Object.entries(value)) places(member, [...path, key], out) }
  return out
}

const get = (value: unknown, path: Path): unknown =>
  path.reduce<any>((current, key) => (current === null || current === undefined ? undefined : current[key]), value)

/** A copy of `value` with the member at `path` replaced (`undefined` deletes it). */
const set = (value: unknown, path: Path, replacement: unknown): unknown => {
  if (path.length === 0) return replacement
  const [key, ...rest] = path
  if (Array.isArray(value)) {
    const copy = [...value]
    if (replacement === undefined && rest.length === 0) copy.splice(key as number, 1)
    else copy[key as number] = set(copy[key as number], rest, replacement)
    return copy
  }
  const copy: Record<string, unknown> = { ...(value as object) }
  if (replacement === undefined && rest.length === 0) delete copy[key as string]
  else copy[key as string] = set(copy[key as string], rest, replacement)
  return copy
}

const requiredOf = (schema: JsonSchema, options: Options): ReadonlyArray<string> => {
  if (typeof schema === "boolean") return []
  const resolved = resolve(schema, options, 0)
  if (resolved === undefined) return []
  const merged = Array.isArray(resolved["allOf"]) ? mergeAll([resolved, ...resolved["allOf"]], options, 0) : resolved
  return Array.isArray(merged["required"]) ? merged["required"] : []
}

const unknownKey = fc.oneof(
  fc.constantFrom("extra", "__proto__", "constructor", "id", "organisation_id", "", " ", "a.b", "$where"),
  fc.string({ minLength: 1, maxLength: 12 })
)

/**
 * A valid value broken in one place: a required property dropped, a member given the wrong type,
 * null, a huge or empty string or nested junk, an unknown property added, or the whole value
 * replaced by something that is not an object.
 */
export const mutated = (schema: JsonSchema, options: Options = {}): fc.Arbitrary<unknown> => {
  const base = valid(schema, options)
  const required = requiredOf(schema, options)
  const at = (f: (value: unknown, path: Path) => fc.Arbitrary<unknown>) =>
    fc.tuple(base, fc.nat()).chain(([value, pick]) => {
      const all = places(value)
      const path = all[pick % all.length]!
      return f(get(value, path), path).map((replacement) => set(value, path, replacement))
    })
  const mutations: Array<fc.WeightedArbitrary<unknown>> = [
    { weight: 3, arbitrary: at((current) => wrongType(current)) },
    { weight: 2, arbitrary: at(() => fc.constant(null)) },
    { weight: 2, arbitrary: at(() => oddStrings) },
    { weight: 1, arbitrary: at(() => junk) },
    // A member dropped, wherever it is (required ones below).
    {
      weight: 1,
      arbitrary: fc.tuple(base, fc.nat()).map(([value, pick]) => {
        const members = places(value).filter((path) => path.length > 0)
        return members.length === 0 ? value : set(value, members[pick % members.length]!, undefined)
      })
    },
    // An unknown property on an object member.
    {
      weight: 2,
      arbitrary: fc.tuple(base, fc.nat(), unknownKey, junk).map(([value, pick, key, odd]) => {
        const objects = places(value).filter((path) => isObject(get(value, path)))
        if (objects.length === 0) return { [key]: odd }
        const path = objects[pick % objects.length]!
        return set(value, [...path, key], odd)
      })
    },
    // Not an object at all.
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.constantFrom<unknown>(null, 0, -1, true, "", [], [{}], "{}"),
        base.map((value) => [value]),
        oddStrings
      )
    }
  ]
  if (required.length > 0) {
    mutations.push({
      weight: 3,
      arbitrary: fc.tuple(base, fc.constantFrom(...required)).map(([value, name]) =>
        isObject(value) ? set(value, [name], undefined) : value
      )
    })
  }
  return fc.oneof(...mutations)
}

/** `valid` or `mutated` values of a schema. */
export const arbitrary = (schema: JsonSchema, mode: Mode, options: Options = {}): fc.Arbitrary<unknown> =>
  mode === "valid" ? valid(schema, options) : mutated(schema, options)

// ---------------------------------------------------------------------------------------------------
// The document

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

export interface Parameter {
  readonly name: string
  readonly in: "path" | "query" | "header" | "cookie"
  readonly required?: boolean
  readonly schema?: JsonSchema
}

export interface Operation {
  readonly id: string
  readonly method: Method
  /** The OpenAPI path, `{name}` for each path parameter. */
  readonly path: string
  readonly parameters: ReadonlyArray<Parameter>
  /** The `application/json` request body schema, if the operation declares one. */
  readonly body: JsonSchema | undefined
}

export interface Document {
  readonly paths: Readonly<Record<string, Readonly<Record<string, any>>>>
  readonly components?: { readonly schemas?: Readonly<Record<string, JsonSchema>> }
}

const METHODS = ["get", "post", "put", "patch", "delete", "head", "options", "trace"]

/** Every operation of the document, in document order. */
export const operationsOf = (document: Document): ReadonlyArray<Operation> => {
  const out: Array<Operation> = []
  for (const [path, item] of Object.entries(document.paths)) {
    const shared: ReadonlyArray<Parameter> = item["parameters"] ?? []
    for (const method of METHODS) {
      const operation = item[method]
      if (!isObject(operation)) continue
      const own: ReadonlyArray<Parameter> = operation["parameters"] ?? []
      const parameters = [
        ...shared.filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)),
        ...own
      ]
      out.push({
        id: operation["operationId"] ?? `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase() as Method,
        path,
        parameters,
        body: operation["requestBody"]?.content?.["application/json"]?.schema
      })
    }
  }
  return out
}
