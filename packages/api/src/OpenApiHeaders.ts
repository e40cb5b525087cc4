/**
 * The headers that the middleware, not the endpoints, adds to the contract, declared in the
 * OpenAPI document so that generated clients and the docs page know them:
 *
 * - `Idempotency-Key` on every authenticated POST (`Idempotency.ts`), and `Idempotent-Replayed`
 *   on their answers;
 * - `X-Request-Id` and `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` on every
 *   answer (`RateLimit.ts`);
 * - `Retry-After` on 429, 503 and 504 answers.
 *
 * It is applied as the API's `OpenApi.Transform` annotation, so the served document, the docs
 * page and anything generated from `OpenApi.fromApi(Api)` all carry it.
 *
 * @since 0.1.0
 */
import { mapOperations } from "./OpenApiDocument.js"

type Json = Record<string, any>

const integer = (description: string) => ({ description, schema: { type: "integer", minimum: 0 } })

/**
 * The reusable header objects, by name (`components.headers`).
 *
 * @since 0.1.0
 * @category constants
 */
export const headers: Json = {
  "X-Request-Id": {
    description: "This request's id; quote it to support. Also in `meta.request_id` and every error.",
    schema: { type: "string" }
  },
  "RateLimit-Limit": integer("The size of the API client's token bucket: the most requests in one burst."),
  "RateLimit-Remaining": integer("Whole requests left in the bucket after this one."),
  "RateLimit-Reset": integer("Seconds until the bucket is full again."),
  "Retry-After": integer(
    "Seconds to wait before retrying (429 `rate_limited`, 503 `provider_rate_limited`, 504 `provider_timeout`)."
  ),
  "Idempotent-Replayed": {
    description: "`true` when this answer is the stored answer to an earlier request with the same `Idempotency-Key`.",
    schema: { type: "string", enum: ["true"] }
  }
}

/**
 * The `Idempotency-Key` request header (`components.parameters.IdempotencyKey`).
 *
 * @since 0.1.0
 * @category constants
 */
export const idempotencyKey: Json = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: "1–255 printable ASCII characters, scoped to your organisation for 24 h. The same key and body " +
    "replays the first answer byte for byte; the same key with another body is 409 `idempotency_key_reused`; " +
    "a duplicate sent while the first is running is 409 `idempotency_key_in_progress`.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7e]+$" }
}

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` })

/**
 * Adds the headers to a generated document (pure; the input is not changed).
 *
 * @since 0.1.0
 * @category transform
 */
export const addHeaders = (spec: Json): Json => {
  const paths = mapOperations(spec.paths ?? {}, (operation, _path, method) => {
    const authenticated = Array.isArray(operation.security) && operation.security.length > 0
    const responses: Json = {}
    for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
      const success = status.startsWith("2")
      responses[status] = {
        ...response,
        headers: {
          ...response.headers,
          "X-Request-Id": ref("X-Request-Id"),
          "RateLimit-Limit": ref("RateLimit-Limit"),
          "RateLimit-Remaining": ref("RateLimit-Remaining"),
          "RateLimit-Reset": ref("RateLimit-Reset"),
          ...(status === "429" || status === "503" || status === "504" ? { "Retry-After": ref("Retry-After") } : {}),
          ...(method === "post" && authenticated && success
            ? { "Idempotent-Replayed": ref("Idempotent-Replayed") }
            : {})
        }
      }
    }
    return {
      ...operation,
      ...(method === "post" && authenticated
        ? { parameters: [...(operation.parameters ?? []), { $ref: "#/components/parameters/IdempotencyKey" }] }
        : {}),
      responses
    }
  })
  return {
    ...spec,
    paths,
    components: {
      ...spec.components,
      headers: { ...spec.components?.headers, ...headers },
      parameters: { ...spec.components?.parameters, IdempotencyKey: idempotencyKey }
    }
  }
}
