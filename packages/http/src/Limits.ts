/**
 * Input limits, checked before any body is decoded (DECISIONS "Errors"):
 *
 * - a body over {@link MAX_BODY_BYTES} (1 MiB) is a 413 `payload_too_large`, from `Content-Length`
 *   up front or by counting the bytes of a chunked body as they arrive (never buffering more);
 * - a body to a `/v1` endpoint that is not `application/json` (the token endpoint also takes
 *   `application/x-www-form-urlencoded`) is a 415 `unsupported_media_type`;
 * - a JSON string longer than {@link MAX_STRING_LENGTH} characters is a 400 `invalid_parameter`
 *   naming it; JSON nested deeper than {@link MAX_DEPTH} levels a 400 `invalid_json`.
 *
 * @since 0.1.0
 */
import type { HttpServerRequest } from "@effect/platform"
import { HttpServerError, UrlParams } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import type { IncomingMessage } from "node:http"

/**
 * @since 0.1.0
 * @category constants
 */
export const MAX_BODY_BYTES = 1024 * 1024

/**
 * @since 0.1.0
 * @category constants
 */
export const MAX_STRING_LENGTH = 10_000

/**
 * @since 0.1.0
 * @category constants
 */
export const MAX_DEPTH = 32

/**
 * Why a body was refused.
 *
 * @since 0.1.0
 * @category models
 */
export type Refusal =
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "UnsupportedMediaType"; readonly contentType: string }
  | { readonly _tag: "StringTooLong"; readonly path: string }
  | { readonly _tag: "TooDeep" }

/** The media type without parameters, lower case ("" when absent). */
const mediaType = (request: HttpServerRequest.HttpServerRequest) =>
  (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()

const hasBody = (request: HttpServerRequest.HttpServerRequest) => {
  const length = request.headers["content-length"]
  return request.headers["transfer-encoding"] !== undefined || (length !== undefined && length.trim() !== "0")
}

const pathOf = (request: HttpServerRequest.HttpServerRequest) => request.url.split("?")[0]!

const isTokenEndpoint = (path: string) => path.replace(/\/$/, "") === "/v1/oauth/token"

/** The media types a path takes: JSON on `/v1`, also a form on the token endpoint; anything elsewhere. */
const accepts = (path: string, type: string): boolean => {
  if (!path.startsWith("/v1/")) return true
  if (type === "" || type === "application/json") return true
  return isTokenEndpoint(path) && type === "application/x-www-form-urlencoded"
}

/** Reads the raw body, counting bytes; past the limit it stops collecting and lets the rest drain. */
const readLimited = (source: IncomingMessage, max: number) =>
  Effect.async<string, Refusal | "Aborted">((resume) => {
    const chunks: Array<Buffer> = []
    let bytes = 0
    let done = false
    const finish = (result: Effect.Effect<string, Refusal | "Aborted">) => {
      if (done) return
      done = true
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
      resume(result)
    }
    const onData = (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes > max) {
        chunks.length = 0
        // discard whatever else arrives instead of holding it
        source.resume()
        finish(Effect.fail({ _tag: "TooLarge" }))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => finish(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
    const onError = () => finish(Effect.fail("Aborted" as const))
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
  })

/**
 * Checks the limits of JSON text without parsing it: the depth of objects and arrays and the
 * length of every string (escapes counted as one character). Returns the first breach.
 *
 * @since 0.1.0
 * @category checks
 */
export const scanJson = (
  text: string,
  limits: { readonly maxDepth: number; readonly maxString: number } = {
    maxDepth: MAX_DEPTH,
    maxString: MAX_STRING_LENGTH
  }
): Refusal | undefined => {
  // path of keys, for naming the offending parameter
  const stack: Array<{ array: boolean; key: string | number }> = []
  let expectKey = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34 /* " */) {
      let length = 0
      let j = i + 1
      let raw = ""
      for (; j < text.length; j++) {
        const d = text.charCodeAt(j)
        if (d === 34) break
        if (d === 92 /* \ */) j += text.charCodeAt(j + 1) === 117 /* u */ ? 5 : 1
        length++
        if (length <= 200) raw += text[j]
      }
      const top = stack[stack.length - 1]
      const isKey = expectKey && top !== undefined && !top.array
      if (length > limits.maxString) {
        const frames = isKey ? stack.slice(0, -1) : stack
        return { _tag: "StringTooLong", path: frames.map((f) => String(f.key)).filter((n) => n !== "").join(".") }
      }
      if (isKey) {
        top.key = raw
        expectKey = false
      }
      i = j
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      stack.push({ array: c === 91, key: c === 91 ? 0 : "" })
      if (stack.length > limits.maxDepth) return { _tag: "TooDeep" }
      expectKey = c === 123
    } else if (c === 125 || c === 93) {
      stack.pop()
      expectKey = false
    } else if (c === 44 /* , */) {
      const top = stack[stack.length - 1]
      if (top !== undefined) {
        if (top.array) top.key = (top.key as number) + 1
        else expectKey = true
      }
    }
  }
  return undefined
}

/**
 * Applies the limits to the request. Without a body, or on a server that is not Node's, the
 * request goes on unchanged; otherwise its body is read (at most {@link MAX_BODY_BYTES}) and a
 * request whose `text`, `json` and `urlParamsBody` answer from that copy is returned.
 *
 * @since 0.1.0
 * @category checks
 */
export const check = (
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerRequest.HttpServerRequest, Refusal> =>
  Effect.gen(function*() {
    if (!hasBody(request)) return request
    const declared = Number(request.headers["content-length"] ?? "0")
    if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) return yield* Effect.fail({ _tag: "TooLarge" } as const)
    const type = mediaType(request)
    if (!accepts(pathOf(request), type)) {
      return yield* Effect.fail({ _tag: "UnsupportedMediaType", contentType: type } as const)
    }
    const source = NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage | undefined
    if (source === undefined || typeof source.on !== "function") return request
    const text = yield* readLimited(source, MAX_BODY_BYTES).pipe(
      // an aborted upload has nobody to answer; hand back an empty body
      Effect.catchIf((e): e is "Aborted" => e === "Aborted", () => Effect.succeed(""))
    )
    // The token endpoint refuses deep or long bodies itself, in the RFC 6749 form (OAuthHttp.ts).
    if ((type === "" || type === "application/json") && !isTokenEndpoint(pathOf(request))) {
      const refusal = scanJson(text)
      if (refusal !== undefined) return yield* Effect.fail(refusal)
    }
    return withBody(request, text)
  })

/** The request, answering its body from `text`. */
const withBody = (request: HttpServerRequest.HttpServerRequest, text: string): HttpServerRequest.HttpServerRequest => {
  const decodeError = (cause: unknown) => new HttpServerError.RequestError({ request, reason: "Decode", cause })
  const copy = Object.create(request) as HttpServerRequest.HttpServerRequest
  Object.defineProperties(copy, {
    text: { get: () => Effect.succeed(text) },
    json: {
      get: () => Effect.try({ try: () => text === "" ? null : JSON.parse(text) as unknown, catch: decodeError })
    },
    urlParamsBody: {
      get: () => Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: decodeError })
    },
    arrayBuffer: { get: () => Effect.succeed(new TextEncoder().encode(text).buffer) }
  })
  return copy
}
