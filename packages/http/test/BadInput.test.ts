/**
 * A table of bad inputs sent to every operation of the OpenAPI document (issue #30, "errors for
 * people"), each answer checked against the same rules:
 *
 * - 400 `validation_error`; a missing required field is `missing_parameter`, anything else
 *   `invalid_parameter`;
 * - `param` names the field at fault, and so does the message;
 * - a closed set is named in full;
 * - no schema words (`Expected … actual`, `ReadonlyArray`, `Struct`, `Encoded side`, `undefined`);
 * - a value echoed back is cut at 100 characters.
 *
 * The cases come from the document itself (each body's documented example with one field made
 * wrong, each query parameter given a value its schema refuses), so a new operation or field is
 * covered without a new line here.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Json } from "./support/TestApp.js"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"

type Schema = Record<string, any>
type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

const schemaWords = /Encoded side|Type side|ReadonlyArray|Struct\b|Expected .+, actual|\bactual\b|\bundefined\b/

/** A value longer than any message may echo. */
const LONG = "z".repeat(400)

interface Case {
  readonly operation: string
  readonly what: string
  readonly method: Method
  readonly path: string
  readonly json?: unknown
  /** The field the answer must blame (`param`), when one is. */
  readonly param?: string
  readonly code: "invalid_parameter" | "missing_parameter"
  /** Values the message must all name (a closed set). */
  readonly allowed?: ReadonlyArray<string>
}

/** `schema` with its `$ref`s followed and `allOf`/single `anyOf` members merged. */
const resolve = (doc: Schema, schema: Schema | undefined): Schema | undefined => {
  if (schema === undefined) return undefined
  if (typeof schema.$ref === "string") return resolve(doc, doc.components.schemas[schema.$ref.split("/").pop()!])
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return resolve(doc, schema.allOf[0])
  const members: Array<Schema> = schema.anyOf ?? schema.oneOf ?? []
  const real = members.filter((m) => m.type !== "null")
  if (real.length === 1) return resolve(doc, real[0])
  return schema
}

/** The values of a closed set, if `schema` is one. */
const enumOf = (doc: Schema, schema: Schema | undefined): ReadonlyArray<string> | undefined => {
  const s = resolve(doc, schema)
  if (s === undefined) return undefined
  if (Array.isArray(s.enum)) return s.enum.filter((v: unknown) => v !== null).map(String)
  const members: Array<Schema> | undefined = s.anyOf ?? s.oneOf
  if (members !== undefined) {
    const values = members.map((m) => resolve(doc, m)).flatMap((m) => m?.enum ?? [])
    if (values.length > 0 && values.length === members.length) return values.map(String)
  }
  return undefined
}

/** A value `schema` refuses, and what the answer must name; undefined when nothing is refused. */
const wrongFor = (
  doc: Schema,
  schema: Schema | undefined
): { value: unknown; allowed?: ReadonlyArray<string> } | undefined => {
  const s = resolve(doc, schema)
  if (s === undefined) return undefined
  const values = enumOf(doc, s)
  if (values !== undefined) return { value: LONG, allowed: values }
  switch (s.type) {
    case "string":
      return { value: 12345 }
    case "integer":
    case "number":
      return { value: "not a number" }
    case "boolean":
      return { value: "yes" }
    case "array":
      return { value: LONG }
    case "object":
      return { value: [LONG] }
    default:
      return undefined
  }
}

/** A query value `schema` refuses. */
const wrongQuery = (
  doc: Schema,
  schema: Schema | undefined
): { value: string; allowed?: ReadonlyArray<string> } | undefined => {
  const s = resolve(doc, schema)
  if (s === undefined) return undefined
  const values = enumOf(doc, s)
  if (values !== undefined) return { value: LONG, allowed: values }
  if (s.type === "integer" || s.type === "number") return { value: `${LONG}x` }
  if (s.type === "boolean") return { value: "1" }
  if (typeof s.maxLength === "number") return { value: "q".repeat(s.maxLength + 1) }
  if (typeof s.pattern === "string" && !new RegExp(s.pattern).test(LONG)) return { value: LONG }
  return undefined
}

describe("bad input to every operation", () => {
  it.effect(
    "every refusal names the field, what was wrong and what is allowed, in plain words",
    () =>
      Effect.gen(function*() {
        const me = yield* signIn
        const token = me.access
        const linked = yield* linkSandbox(token)
        const facilities = yield* call("GET", `/v1/connections/${linked.connection_id}/facilities`, { token })
        const ids: Record<string, string> = {
          connection_id: linked.connection_id,
          facility_id: facilities.body.data[0].id
        }
        const doc = (yield* call("GET", "/v1/openapi.json")).body as Schema

        const cases: Array<Case> = []
        for (const [template, item] of Object.entries<Schema>(doc.paths)) {
          for (const [method, op] of Object.entries<Schema>(item)) {
            if (!["get", "post", "put", "patch", "delete"].includes(method)) continue
            // the token endpoint answers RFC 6749's own bodies
            if (op.operationId === "createToken") continue
            const path = template.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? `${name}_unknown`)
            const upper = method.toUpperCase() as Method
            const body = resolve(doc, op.requestBody?.content?.["application/json"]?.schema)
            const example = op.requestBody?.content?.["application/json"]?.example
            if (body !== undefined) {
              cases.push({
                operation: op.operationId,
                what: "a null body",
                method: upper,
                path,
                json: null,
                code: "invalid_parameter"
              })
              const required: Array<string> = body.required ?? []
              if (required.length > 0) {
                cases.push({
                  operation: op.operationId,
                  what: "an empty object",
                  method: upper,
                  path,
                  json: {},
                  code: "missing_parameter"
                })
              }
              if (
                example !== undefined && typeof example === "object" && example !== null &&
                body.properties !== undefined
              ) {
                for (const [field, fieldSchema] of Object.entries<Schema>(body.properties)) {
                  const wrong = wrongFor(doc, fieldSchema)
                  if (wrong === undefined) continue
                  cases.push({
                    operation: op.operationId,
                    what: `${field} made wrong`,
                    method: upper,
                    path,
                    json: { ...example, [field]: wrong.value },
                    param: field,
                    code: "invalid_parameter",
                    ...(wrong.allowed === undefined ? {} : { allowed: wrong.allowed })
                  })
                  if (required.includes(field)) {
                    const { [field]: _dropped, ...without } = example as Record<string, unknown>
                    cases.push({
                      operation: op.operationId,
                      what: `${field} left out`,
                      method: upper,
                      path,
                      json: without,
                      param: field,
                      code: "missing_parameter"
                    })
                  }
                }
              }
            }
            for (const parameter of (op.parameters ?? []) as Array<Schema>) {
              if (parameter.in !== "query") continue
              const wrong = wrongQuery(doc, parameter.schema)
              if (wrong === undefined) continue
              cases.push({
                operation: op.operationId,
                what: `?${parameter.name} made wrong`,
                method: upper,
                path: `${path}?${parameter.name}=${encodeURIComponent(wrong.value)}`,
                param: parameter.name,
                code: "invalid_parameter",
                ...(wrong.allowed === undefined ? {} : { allowed: wrong.allowed })
              })
            }
          }
        }
        assert.isAbove(cases.length, 60, "the table covers the document")

        const problems: Array<string> = []
        for (const c of cases) {
          const answer: Json = yield* call(c.method, c.path, {
            token,
            ...(c.json === undefined ? {} : { json: c.json })
          })
          const where = `${c.operation} (${c.what})`
          const error = answer.body?.error
          if (answer.status !== 400 || error === undefined) {
            problems.push(`${where}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`)
            continue
          }
          const message = String(error.message)
          if (error.type !== "validation_error") problems.push(`${where}: type ${error.type}`)
          // an unknown scenario has its own code in the contract (DECISIONS "Errors")
          const code = c.param === "scenario" && error.code === "unknown_scenario" ? c.code : error.code
          if (code !== c.code) problems.push(`${where}: code ${error.code}, expected ${c.code}: ${message}`)
          if (schemaWords.test(message)) problems.push(`${where}: schema words in "${message}"`)
          if (message.includes(LONG.slice(0, 101)) || message.includes("q".repeat(101))) {
            problems.push(`${where}: echoes more than 100 characters`)
          }
          if (c.param !== undefined) {
            if (
              typeof error.param !== "string" || !(error.param === c.param || error.param.startsWith(`${c.param}.`))
            ) {
              problems.push(`${where}: param ${error.param}, expected ${c.param}: ${message}`)
            }
            if (!message.includes(c.param)) {
              problems.push(`${where}: the message does not name ${c.param}: "${message}"`)
            }
          }
          if (process.env.SHOW_MESSAGES) console.log(`${where}: ${error.code} ${error.param} ${message}`)
          for (const value of c.allowed ?? []) {
            if (!message.includes(value)) {
              problems.push(`${where}: "${message}" does not name the allowed value ${value}`)
            }
          }
        }
        assert.deepStrictEqual(problems, [])
      }).pipe(Effect.provide(TestApp)),
    120_000
  )
})
