/**
 * The HTTP answers of a Metrc-style system: JSON bodies, the request-level `{Message}` error, the
 * row-level `[{row,message}]` error of a write, the statuses that carry no body, and the camelCase
 * keys some states answer with.
 */

/** A JSON answer. */
export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } })

/** A request-level error: `{"Message": "…"}`. */
export const message = (status: number, text: string): Response => json({ Message: text }, status)

/** A write refused row by row: `[{"row": 0, "message": "…"}]`. */
export const rows = (refusals: ReadonlyArray<{ readonly row: number; readonly message: string }>): Response =>
  json(refusals.map((r) => ({ row: r.row, message: r.message })), 400)

/** A status with no body (405, 413). */
export const empty = (status: number): Response => new Response(null, { status })

/**
 * The challenge a 401 carries. The research documents Metrc's 401 (status and wording, no body
 * shape) but not its header; HTTP requires a 401 to name the scheme it wants (RFC 9110 §11.6.1), and
 * Metrc's scheme is Basic: username = vendor API key, password = user API key.
 */
export const CHALLENGE =
  "Basic realm=\"provider_a sandbox (username: vendor API key, password: user API key)\", charset=\"UTF-8\""

/**
 * A refused login: 401 with `WWW-Authenticate`, with no body (a missing, malformed or refused key:
 * Metrc's body is not reliably JSON) or with a `{Message}` (a locked account).
 */
export const unauthorized = (text?: string): Response =>
  text === undefined
    ? new Response(null, { status: 401, headers: { "www-authenticate": CHALLENGE } })
    : json({ Message: text }, 401, { "www-authenticate": CHALLENGE })

/** Metrc's 429 text. */
export const RATE_LIMITED =
  "The limit of API calls allowed has been exceeded. Please pace the usage rate of the API more apart."

/** A 429 with `Retry-After` (seconds). */
export const rateLimited = (retryAfterSeconds: number): Response =>
  json({ Message: RATE_LIMITED }, 429, { "retry-after": String(retryAfterSeconds) })

/** Metrc's 404 for an unknown path, id or label. */
export const notFound = (): Response =>
  message(404, "The requested resource could not be found (incorrect or invalid URI).")

/** Metrc's 403 for a licence the user key has no access to. */
export const forbidden = (): Response =>
  message(403, "The authenticated user does not have access to the requested resource.")

/** A single object, or the 404 when there is none. */
export const one = (found: unknown): Response => (found === undefined ? notFound() : json(found))

/** Every key of a JSON value with its first letter lowered (`LastModified` → `lastModified`). */
const camelKeys = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(camelKeys)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k.charAt(0).toLowerCase() + k.slice(1), camelKeys(v)]))
    : value

/**
 * A JSON answer with camelCase keys, as some states answer (OpenMetrc made its reader
 * case-insensitive for them). An answer that is not JSON, or does not parse, is left as it is.
 */
export const camelCased = async (response: Response): Promise<Response> => {
  if (!(response.headers.get("content-type") ?? "").includes("json")) return response
  let body: unknown
  try {
    body = JSON.parse(await response.clone().text())
  } catch {
    return response
  }
  return new Response(JSON.stringify(camelKeys(body)), { status: response.status, headers: response.headers })
}
