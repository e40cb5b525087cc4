/**
 * The words of a request that fails its schema (issue #30, "errors for people"): the framework's
 * decode issues (`HttpApiDecodeError.issues`, Effect's `ArrayFormatter` output) rewritten as one
 * refusal a person can act on.
 *
 * - A missing required field is `missing_parameter`, with `param`.
 * - The message names the field, what was wrong and what is allowed: every value of a closed set,
 *   a range, a type in plain words ("a list", "true or false"). It holds no schema words
 *   (`Expected … actual`, `ReadonlyArray`, `Struct`, `Encoded side`).
 * - A value echoed back is cut at `MAX_ECHO` characters.
 *
 * Pure: no I/O, so it is tested on its own (`test/DecodeMessages.test.ts`) and over every
 * operation of the API (`test/BadInput.test.ts`).
 *
 * @since 0.1.0
 */

/**
 * One issue as the framework reports it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Issue {
  readonly _tag: string
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/**
 * What the client is told.
 *
 * @since 0.1.0
 * @category models
 */
export interface Refusal {
  readonly code: "invalid_parameter" | "missing_parameter"
  readonly message: string
  readonly param?: string
}

/**
 * The most characters of a value a message echoes back.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_ECHO = 100

/** The framework's own segments of a path (where the value came from), not the client's names. */
const outer = new Set<PropertyKey>(["payload", "urlParams", "path", "headers"])

const paramOf = (path: ReadonlyArray<PropertyKey>): string | undefined => {
  const names = path.filter((p) => !outer.has(p)).map(String)
  return names.length === 0 ? undefined : names.join(".")
}

/**
 * `text` cut at `MAX_ECHO` characters (an ellipsis says so); a quoted string keeps its quotes.
 *
 * @since 0.1.0
 * @category formatting
 */
export const echo = (text: string): string => {
  const quoted = text.length >= 2 && text.startsWith("\"") && text.endsWith("\"")
  const inner = quoted ? text.slice(1, -1) : text
  if (inner.length <= MAX_ECHO) return text
  return quoted ? `"${inner.slice(0, MAX_ECHO)}…"` : `${inner.slice(0, MAX_ECHO)}…`
}

/** Splits `a | b | "c | d"` at its top-level bars (not inside quotes or brackets). */
const alternatives = (expected: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let depth = 0
  let quoted = false
  let start = 0
  for (let i = 0; i < expected.length; i++) {
    const c = expected[i]!
    if (c === "\"" && expected[i - 1] !== "\\") quoted = !quoted
    if (quoted) continue
    if (c === "<" || c === "{" || c === "[" || c === "(") depth++
    else if (c === ">" || c === "}" || c === "]" || c === ")") depth--
    else if (c === "|" && depth === 0 && expected[i - 1] === " " && expected[i + 1] === " ") {
      out.push(expected.slice(start, i - 1).trim())
      start = i + 2
    }
  }
  out.push(expected.slice(start).trim())
  return out.filter((a) => a !== "")
}

/** A literal of a closed set: a quoted string, a number, a boolean or null. */
const literalOf = (alternative: string): string | undefined => {
  if (/^"(?:[^"\\]|\\.)*"$/.test(alternative)) {
    try {
      return String(JSON.parse(alternative))
    } catch {
      return alternative.slice(1, -1)
    }
  }
  if (/^-?\d+(\.\d+)?$/.test(alternative) || alternative === "true" || alternative === "false") return alternative
  return undefined
}

/** Identifiers of the API's schemas that name a kind of value rather than an object. */
const namedKinds: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(string|String|NonEmptyString|Trimmed|NonEmptyTrimmedString|Trim|Lowercase|Uppercase)$/, "a string"],
  [/^(number|Number|NumberFromString|Finite|NonNegative|Positive|JsonNumber)$/, "a number"],
  [/^(Int|NonNegativeInt|PositiveInt)$/, "a whole number"],
  [/^(boolean|Boolean|BooleanFromString)$/, "true or false"],
  [/^null$/, "null"],
  [/^(DateFromString|Date|DateTimeUtc|DateTimeUtcFromSelf)$/, "a date"],
  [/^(IsoDate|LocalDate)$/, "a date (YYYY-MM-DD)"],
  [/^(IsoDateTime|Timestamp|DateTime)$/, "a date and time (ISO 8601)"],
  [/^(Url|URL|HttpsUrl)$/, "a URL"],
  [/Id$/, "an id"]
]

/** One alternative of a schema's description, in plain words. */
const describe = (alternative: string): string => {
  for (const [pattern, words] of namedKinds) if (pattern.test(alternative)) return words
  if (/^(ReadonlyArray|Array|NonEmptyReadonlyArray|NonEmptyArray)<|^readonly \[|^\[/.test(alternative)) return "a list"
  if (/^\{|Encoded side|Type side|Struct|^Record</.test(alternative)) return "an object"
  if (/^[A-Z][A-Za-z0-9]*$/.test(alternative)) return "an object"
  if (/^(a|an|the) /i.test(alternative)) return alternative
  // a description written for people (an annotation): kept, as what is expected
  return alternative.charAt(0).toLowerCase() + alternative.slice(1)
}

/** "a, b or c" */
const orList = (items: ReadonlyArray<string>): string =>
  items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`

/** What is allowed, from every alternative the issues at one path name. */
const allowed = (expected: ReadonlyArray<string>): string => {
  // an optional field's "or undefined" is not something a client can send
  const all = [...new Set(expected.flatMap(alternatives))].filter((a) => a !== "undefined")
  const literals = all.map(literalOf)
  if (literals.every((l): l is string => l !== undefined)) {
    const values = [...new Set(literals)]
    if (values.length === 2 && values.includes("true") && values.includes("false")) return "true or false"
    return values.length === 1 ? `"${values[0]}"` : `one of: ${values.join(", ")}`
  }
  const words = [...new Set(all.map((a) => literalOf(a) !== undefined ? `"${literalOf(a)}"` : describe(a)))]
  return orList(words)
}

const expectedActual = /^Expected ([\s\S]+), actual ([\s\S]*)$/

/** A message the schema wrote for people (an annotation): kept, its echoed values cut. */
const human = (message: string): string => {
  const cut = message.replace(/"([^"]{101,})"/g, (_, value: string) => `"${value.slice(0, MAX_ECHO)}…"`)
  return cut.length <= 300 ? cut : `${cut.slice(0, 300)}…`
}

/**
 * The refusal of a request whose issues are `issues` (the first field at fault; every issue at
 * that field, so that a closed set is named in full).
 *
 * @since 0.1.0
 * @category formatting
 */
export const refusal = (issues: ReadonlyArray<Issue>): Refusal => {
  const first = issues[0]
  if (first === undefined) return { code: "invalid_parameter", message: "The request is not valid" }
  const param = paramOf(first.path)
  const key = JSON.stringify(first.path.map(String))
  const here = issues.filter((i) => JSON.stringify(i.path.map(String)) === key)
  const subject = param === undefined ? "The request body" : `\`${param}\``
  const withParam = (code: Refusal["code"], message: string): Refusal =>
    param === undefined ? { code, message } : { code, message, param }

  if (here.some((i) => i._tag === "Missing")) return withParam("missing_parameter", `${subject} is required`)

  const unexpected = here.find((i) => i._tag === "Unexpected")
  if (unexpected !== undefined) {
    const fields = /expected: ([\s\S]+)$/.exec(unexpected.message)?.[1]
    const names = fields === undefined ? [] : alternatives(fields).map((f) => literalOf(f) ?? f)
    return withParam(
      "invalid_parameter",
      names.length === 0
        ? `${subject} is not a field of this request`
        : `${subject} is not a field of this request; the fields are ${names.join(", ")}`
    )
  }

  // a message the schema wrote for people says it best
  const written = here.find((i) => !expectedActual.test(i.message))
  if (written !== undefined) {
    const field = param?.split(".").pop()
    const named = field === undefined || written.message.includes(field)
    return withParam("invalid_parameter", named ? human(written.message) : `${subject}: ${human(written.message)}`)
  }
  const pairs = here.flatMap((i) => {
    const match = expectedActual.exec(i.message)
    return match === null ? [] : [{ expected: match[1]!, actual: match[2]! }]
  })
  if (pairs.length === 0) return withParam("invalid_parameter", human(first.message))
  const actual = pairs[pairs.length - 1]!.actual
  return withParam(
    "invalid_parameter",
    `${subject} must be ${allowed(pairs.map((p) => p.expected))}; got ${echo(actual)}`
  )
}
