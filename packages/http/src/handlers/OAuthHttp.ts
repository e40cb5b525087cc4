/**
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { Effect, Option } from "effect"
import * as Errors from "../Errors.js"
import * as Limits from "../Limits.js"
import { Auth } from "../services/Auth.js"

const allowed = new Set(["grant_type", "client_id", "client_secret", "refresh_token", "scope"])

/** Reads the token request from a JSON or form body (and client_secret_basic), strictly. */
const readBody = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
  const text = yield* Effect.orElseSucceed(request.text, () => "")
  if (text.trim() === "") return yield* Effect.fail(Errors.oauth("invalid_request", "The body is required"))
  let fields: Record<string, unknown>
  if (type === "application/json") {
    try {
      const parsed: unknown = JSON.parse(text)
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object")
      fields = parsed as Record<string, unknown>
    } catch {
      return yield* Effect.fail(Errors.oauth("invalid_request", "The body is not a JSON object"))
    }
  } else if (type === "application/x-www-form-urlencoded") {
    fields = Object.fromEntries(new URLSearchParams(text))
  } else {
    return yield* Effect.fail(
      Errors.oauth("invalid_request", "Send application/json or application/x-www-form-urlencoded")
    )
  }
  const extra = Object.keys(fields).find((k) => !allowed.has(k))
  if (extra !== undefined) return yield* Effect.fail(Errors.oauth("invalid_request", `Unknown property ${extra}`))
  const bad = Object.entries(fields).find(([, v]) => typeof v !== "string")
  if (bad !== undefined) return yield* Effect.fail(Errors.oauth("invalid_request", `${bad[0]} must be a string`))
  const long = Object.entries(fields).find(([, v]) => (v as string).length > Limits.MAX_STRING_LENGTH)
  if (long !== undefined) {
    return yield* Effect.fail(
      Errors.oauth("invalid_request", `${long[0]} is longer than ${Limits.MAX_STRING_LENGTH} characters`)
    )
  }
  const basic = request.headers.authorization
  const out = fields as Record<string, string>
  if (basic?.startsWith("Basic ")) {
    const decoded = Buffer.from(basic.slice(6), "base64").toString("utf8")
    const colon = decoded.indexOf(":")
    if (colon > 0) {
      return {
        ...out,
        client_id: decodeURIComponent(decoded.slice(0, colon)),
        client_secret: decodeURIComponent(decoded.slice(colon + 1))
      }
    }
  }
  return out
})

/**
 * @since 0.1.0
 * @category layers
 */
export const HttpOAuthLive = HttpApiBuilder.group(
  Api,
  "oauth",
  (handlers) =>
    handlers.handle("token", () =>
      Effect.gen(function*() {
        const auth = yield* Auth
        const body = yield* readBody
        const grant = Option.fromNullable(body.grant_type)
        if (Option.isNone(grant)) return yield* Effect.fail(Errors.oauth("invalid_request", "grant_type is required"))
        if (grant.value === "client_credentials") {
          if (body.client_id === undefined || body.client_secret === undefined) {
            return yield* Effect.fail(Errors.oauth("invalid_request", "client_id and client_secret are required"))
          }
          return yield* auth.clientCredentials(body.client_id, body.client_secret, body.scope)
        }
        if (grant.value === "refresh_token") {
          if (body.refresh_token === undefined) {
            return yield* Effect.fail(Errors.oauth("invalid_request", "refresh_token is required"))
          }
          return yield* auth.refresh(body.refresh_token, body.scope, {
            id: body.client_id,
            secret: body.client_secret
          })
        }
        return yield* Effect.fail(Errors.oauth("unsupported_grant_type", `Unsupported grant_type ${grant.value}`))
      }))
)
