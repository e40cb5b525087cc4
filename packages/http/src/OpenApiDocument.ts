/**
 * What the OpenAPI document says beyond what `OpenApi.fromApi` derives from the endpoints
 * (DECISIONS "OpenAPI"), applied as part of the API's `OpenApi.Transform`:
 *
 * - `operationId`s a person would write (`listPackages`, not `resources.listPackages`);
 * - `page` and `per_page` as integers (min 1; `per_page` max 100): the query string carries them as
 *   digits, which the server decodes;
 * - the OAuth2 client-credentials flow of `POST /v1/oauth/token` as a security scheme, offered
 *   beside the bearer scheme on every authenticated operation.
 *
 * @since 0.1.0
 */
import { Page } from "@tracebridge/core"

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

const paging: Readonly<Record<string, Json>> = {
  page: { type: "integer", minimum: 1, default: 1 },
  per_page: { type: "integer", minimum: 1, maximum: Page.MAX_PER_PAGE, default: Page.DEFAULT_PER_PAGE }
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

/**
 * Applies the above to a generated document.
 *
 * @since 0.1.0
 * @category operations
 */
export const polish = (spec: Json): Json => {
  const paths: Json = {}
  for (const [path, item] of Object.entries<Json>(spec.paths ?? {})) {
    const next: Json = {}
    for (const [method, operation] of Object.entries<Json>(item)) {
      if (typeof operation !== "object" || operation === null || typeof operation.operationId !== "string") {
        next[method] = operation
        continue
      }
      const parameters = (operation.parameters ?? []).map((p: Json) =>
        p.in === "query" && paging[p.name] !== undefined
          ? { ...p, schema: { ...paging[p.name], description: p.schema?.description ?? p.description } }
          : p
      )
      const security = Array.isArray(operation.security) && operation.security.length > 0
        ? [...operation.security, { oauth2: [] }]
        : operation.security
      next[method] = {
        ...operation,
        operationId: operationId(operation.operationId),
        ...(operation.parameters === undefined ? {} : { parameters }),
        ...(security === undefined ? {} : { security })
      }
    }
    paths[path] = next
  }
  return {
    ...spec,
    paths,
    components: {
      ...spec.components,
      securitySchemes: { ...spec.components?.securitySchemes, oauth2 }
    }
  }
}
