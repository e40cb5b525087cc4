/**
 * What the OpenAPI document says beyond what `OpenApi.fromApi` derives from the endpoints
 * (DECISIONS "OpenAPI"), applied as part of the API's `OpenApi.Transform`:
 *
 * - `operationId`s a person would write (`listPackages`, not `resources.listPackages`);
 * - `page`, `per_page` and `limit` as integers (min 1; `per_page` max 100, `limit` 500), and
 *   `is_on_hold` as a boolean: the query string carries them as digits and `true`/`false`, which
 *   the server decodes;
 * - the OAuth2 client-credentials flow of `POST /v1/oauth/token` as a security scheme, offered
 *   beside the bearer scheme on every authenticated operation;
 * - the token request's body for both grants, as JSON and as a form (the handler reads the raw
 *   body itself, strictly, so the endpoint declares no payload schema);
 * - an example of every operation's request body and success answer (`OpenApiExamples`);
 * - only the schemas the operations use: not the framework's decode error, which is never sent
 *   (each operation's errors are its own: `OpenApiErrors`).
 *
 * @since 0.1.0
 */
import { Page } from "@tracebridge/core"
import * as OpenApiExamples from "./OpenApiExamples.js"

type Json = Record<string, any>

/** Endpoint names that read as a verb only with their group. */
const renamed: Readonly<Record<string, string>> = {
  health: "getHealth",
  token: "createToken",
  simulate: "simulateScenario",
  reset: "resetSandboxConnection",
  setFault: "setSandboxFault",
  getFault: "getSandboxFault",
  clearFault: "clearSandboxFault"
}

/**
 * The `operationId` of an endpoint named `group.name` by `OpenApi.fromApi`.
 *
 * @since 0.1.0
 * @category operations
 */
export const operationId = (generated: string): string => {
  const name = generated.slice(generated.indexOf(".") + 1)
  return renamed[name] ?? name
}

/**
 * Query parameters the query string carries as text but the server reads as numbers or flags: the
 * document types them as what they mean (issue #30: a generated client then takes `limit: 50` and
 * `is_on_hold: true`, and sends them as digits and `true`/`false`).
 */
const typedQuery: Readonly<Record<string, Json>> = {
  page: { type: "integer", minimum: 1, default: 1 },
  per_page: { type: "integer", minimum: 1, maximum: Page.MAX_PER_PAGE, default: Page.DEFAULT_PER_PAGE },
  limit: {
    type: "integer",
    minimum: 1,
    maximum: 500,
    default: 100,
    description: "Changes per page, 1 to 500 (default 100)"
  },
  is_on_hold: {
    type: "boolean",
    description: "Only packages on hold (`true`: any kind of hold) or only those not (`false`)"
  }
}

/**
 * The OAuth2 scheme (`components.securitySchemes.oauth2`).
 *
 * @since 0.1.0
 * @category constants
 */
export const oauth2: Json = {
  type: "oauth2",
  description: "Client credentials: POST /v1/oauth/token with your client id and secret; send the access " +
    "token as a bearer token. Connection tokens (from the exchange) are bearer tokens too.",
  flows: {
    clientCredentials: {
      tokenUrl: "/v1/oauth/token",
      refreshUrl: "/v1/oauth/token",
      scopes: {
        sandbox: "Sandbox connections (every client has it)",
        production: "Production connections (organisations on the production plan)"
      }
    }
  }
}

const scope = {
  type: "string",
  description: "Space-separated scopes: `sandbox` (always granted), `production` (production plan only)",
  example: "sandbox"
}

/**
 * The token request's schemas, one per grant (`components.schemas`).
 *
 * @since 0.1.0
 * @category constants
 */
export const tokenRequestSchemas: Json = {
  ClientCredentialsGrant: {
    type: "object",
    description: "RFC 6749 §4.4: an access token and a refresh token for an API client.",
    required: ["grant_type", "client_id", "client_secret"],
    properties: {
      grant_type: { type: "string", enum: ["client_credentials"] },
      client_id: { type: "string", example: "tb_client_0123456789abcdef0123456789abcdef" },
      client_secret: { type: "string", example: "tb_secret_…" },
      scope
    },
    additionalProperties: false
  },
  RefreshTokenGrant: {
    type: "object",
    description: "RFC 6749 §6: a new access token (and refresh token) for a refresh token, which is then spent. " +
      "No client secret is needed; a client id or secret that is sent is checked.",
    required: ["grant_type", "refresh_token"],
    properties: {
      grant_type: { type: "string", enum: ["refresh_token"] },
      refresh_token: { type: "string", example: "tb_rt_…" },
      client_id: { type: "string" },
      client_secret: { type: "string" },
      scope
    },
    additionalProperties: false
  }
}

const tokenRequestBody: Json = (() => {
  const schema = {
    oneOf: Object.keys(tokenRequestSchemas).map((name) => ({ $ref: `#/components/schemas/${name}` })),
    discriminator: {
      propertyName: "grant_type",
      mapping: {
        client_credentials: "#/components/schemas/ClientCredentialsGrant",
        refresh_token: "#/components/schemas/RefreshTokenGrant"
      }
    }
  }
  return {
    required: true,
    content: {
      "application/json": { schema },
      "application/x-www-form-urlencoded": { schema }
    }
  }
})()

/** The `#/components/schemas/…` names a value refers to. */
const refsOf = (value: unknown, into: Set<string>): Set<string> => {
  if (Array.isArray(value)) {
    for (const v of value) refsOf(v, into)
  } else if (typeof value === "object" && value !== null) {
    for (const [key, v] of Object.entries(value)) {
      if (key === "$ref" && typeof v === "string" && v.startsWith("#/components/schemas/")) {
        into.add(v.slice("#/components/schemas/".length))
      } else refsOf(v, into)
    }
  }
  return into
}

/**
 * The schemas the operations use, directly or through other schemas: the framework also adds
 * ones that no operation refers to (its decode error, which is never sent; query structs whose
 * fields are inlined as parameters).
 */
const used = (paths: Json, schemas: Json): Json => {
  const reached = refsOf(paths, new Set())
  const pending = [...reached]
  while (pending.length > 0) {
    for (const name of refsOf(schemas[pending.pop()!], new Set())) {
      if (!reached.has(name)) {
        reached.add(name)
        pending.push(name)
      }
    }
  }
  return Object.fromEntries(Object.entries<Json>(schemas).filter(([name]) => reached.has(name)))
}

/**
 * A request body or a response with its example (`OpenApiExamples`), where there is one: on its
 * JSON, else on the one media type it has (the event stream's `text/event-stream`).
 */
const withExample = (body: Json, example: unknown): Json => {
  const content: Record<string, Json> = body.content ?? {}
  const media = "application/json" in content ? "application/json" : Object.keys(content)[0]
  return example === undefined || media === undefined
    ? body
    : { ...body, content: { ...content, [media]: { ...content[media], example } } }
}

/**
 * The document's `paths` with `f` applied to every operation (the path item's other members, such
 * as shared parameters, are kept as they are).
 *
 * @since 0.1.0
 * @category operations
 */
export const mapOperations = (
  paths: Json,
  f: (operation: Json, path: string, method: string) => Json
): Json =>
  Object.fromEntries(
    Object.entries<Json>(paths).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries<Json>(item).map(([method, operation]) => [
          method,
          METHODS.includes(method) && typeof operation === "object" && operation !== null
            ? f(operation, path, method)
            : operation
        ])
      )
    ])
  )

const METHODS: ReadonlyArray<string> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

/**
 * Applies the above to a generated document.
 *
 * @since 0.1.0
 * @category operations
 */
export const polish = (spec: Json): Json => {
  const paths = mapOperations(spec.paths ?? {}, (operation) => {
    const parameters = (operation.parameters ?? []).map((p: Json) =>
      p.in === "query" && typedQuery[p.name] !== undefined
        ? {
          ...p,
          schema: { description: p.schema?.description ?? p.description, ...typedQuery[p.name] }
        }
        : p
    )
    const security = Array.isArray(operation.security) && operation.security.length > 0
      ? [...operation.security, { oauth2: [] }]
      : operation.security
    const id = operationId(operation.operationId)
    const requestBody = id === "createToken" ? tokenRequestBody : operation.requestBody
    return {
      ...operation,
      operationId: id,
      ...(requestBody === undefined ? {} : { requestBody: withExample(requestBody, OpenApiExamples.requests[id]) }),
      responses: Object.fromEntries(
        Object.entries<Json>(operation.responses ?? {}).map(([status, response]) => [
          status,
          status.startsWith("2") ? withExample(response, OpenApiExamples.responses[id]) : response
        ])
      ),
      ...(operation.parameters === undefined ? {} : { parameters }),
      ...(security === undefined ? {} : { security })
    }
  })
  return {
    ...spec,
    paths,
    components: {
      ...spec.components,
      schemas: used(paths, { ...spec.components?.schemas, ...tokenRequestSchemas }),
      securitySchemes: { ...spec.components?.securitySchemes, oauth2 }
    }
  }
}
