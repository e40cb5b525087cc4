/**
 * Validates JSON bodies against the served OpenAPI document's own schemas (JSON Schema 2020-12, as
 * OpenAPI 3.1 has it), with Ajv: a response against its operation's documented status, a request
 * body or an example against the schema it illustrates.
 */
import { Ajv2020 } from "ajv/dist/2020.js"

type Json = Record<string, any>

/** `$id`s that Effect repeats inside one document ("/schemas/unknown") would clash in Ajv. */
const withoutIds = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutIds)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).filter(([k]) => k !== "$id").map(([k, v]) => [k, withoutIds(v)]))
    : value

const pointer = (...parts: ReadonlyArray<string>) =>
  parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/")

export interface Operation {
  readonly path: string
  readonly method: string
  readonly op: Json
}

/** Every operation of the document, with its path template and method. */
export const operations = (doc: Json): ReadonlyArray<Operation> =>
  Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item)
      .filter(([, op]) => typeof op === "object" && op !== null && typeof op.operationId === "string")
      .map(([method, op]) => ({ path, method, op }))
  )

export interface Validator {
  readonly operation: (operationId: string) => Operation
  /** Problems with a response body (empty when it matches the documented status and schema). */
  readonly response: (operationId: string, status: number, body: unknown) => ReadonlyArray<string>
  /** Problems with a JSON request body against the operation's `application/json` schema. */
  readonly request: (operationId: string, body: unknown) => ReadonlyArray<string>
  /** Problems with a value against a JSON pointer into the document (e.g. `#/components/schemas/Package`). */
  readonly at: (ref: string, value: unknown) => ReadonlyArray<string>
}

/** A validator over one document. */
export const make = (doc: Json): Validator => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
  ajv.addSchema(withoutIds(doc) as Json, "openapi")
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>()
  const check = (ref: string, value: unknown) => {
    let validate = compiled.get(ref)
    if (validate === undefined) {
      validate = ajv.compile({ $ref: `openapi${ref}` })
      compiled.set(ref, validate)
    }
    return validate(value)
      ? []
      : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message} (${e.schemaPath})`)
  }
  const byId = new Map(operations(doc).map((o) => [o.op.operationId as string, o]))
  const operation = (operationId: string) => {
    const found = byId.get(operationId)
    if (found === undefined) throw new Error(`no operation ${operationId} in the document`)
    return found
  }
  const base = (o: Operation) => `#/${pointer("paths", o.path, o.method)}`
  return {
    operation,
    at: check,
    response: (operationId, status, body) => {
      const o = operation(operationId)
      const documented = o.op.responses?.[String(status)]
      if (documented === undefined) {
        return [
          `${operationId} answered ${status}, which it does not document (${Object.keys(o.op.responses).join(", ")})`
        ]
      }
      // JSON where it is documented, else the one media type documented (a server-sent event stream's text)
      const content: Record<string, Json> = documented.content ?? {}
      const media = "application/json" in content ? "application/json" : Object.keys(content)[0]
      if (media === undefined || content[media]?.schema === undefined) {
        return body === null || body === undefined ? [] : [`${operationId} ${status} documents no body`]
      }
      return check(`${base(o)}/${pointer("responses", String(status), "content", media, "schema")}`, body)
        .map((p) => `${operationId} ${status}: ${p}`)
    },
    request: (operationId, body) => {
      const o = operation(operationId)
      if (o.op.requestBody?.content?.["application/json"]?.schema === undefined) {
        return [`${operationId} documents no JSON request body`]
      }
      return check(`${base(o)}/${pointer("requestBody", "content", "application/json", "schema")}`, body)
        .map((p) => `${operationId} request: ${p}`)
    }
  }
}
