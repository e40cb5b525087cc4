/**
 * The request log: one line per response, like `HttpMiddleware.logger` (method, URL, status and a
 * log span), except that query parameters which may carry a secret have their values replaced by
 * `REDACTED`. The hosted Connect page and its session endpoint take the link token in the query
 * string (`/connect?link_token=…`), and a log line must never hold a token.
 *
 * @since 0.1.0
 */
import type { HttpApp } from "@effect/platform"
import { HttpMiddleware, HttpServerError, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"

const sensitive = /token|secret|key|password|credential|code/i

/**
 * A request URL (path and query) with the values of sensitive query parameters redacted.
 *
 * @since 0.1.0
 * @category redaction
 */
export const redactUrl = (url: string): string => {
  const q = url.indexOf("?")
  if (q < 0) return url
  const params = new URLSearchParams(url.slice(q + 1))
  let changed = false
  for (const [name] of params) {
    if (sensitive.test(name)) {
      params.set(name, "REDACTED")
      changed = true
    }
  }
  return changed ? `${url.slice(0, q)}?${params.toString()}` : url
}

/**
 * The middleware: logs every response once, with `http.method`, `http.url` (redacted) and
 * `http.status`.
 *
 * @since 0.1.0
 * @category middleware
 */
export const logger: <E, R>(app: HttpApp.Default<E, R>) => HttpApp.Default<E, R> = HttpMiddleware.make((app) => {
  let counter = 0
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.withLogSpan(
      Effect.flatMap(Effect.exit(app), (exit) => {
        const annotations = { "http.method": request.method, "http.url": redactUrl(request.url) }
        if (exit._tag === "Failure") {
          const [response, cause] = HttpServerError.causeResponseStripped(exit.cause)
          return Effect.zipRight(
            Effect.annotateLogs(Effect.log(cause._tag === "Some" ? cause.value : "Sent HTTP Response"), {
              ...annotations,
              "http.status": response.status
            }),
            exit
          )
        }
        return Effect.zipRight(
          Effect.annotateLogs(Effect.log("Sent HTTP response"), { ...annotations, "http.status": exit.value.status }),
          exit
        )
      }),
      `http.span.${++counter}`
    ))
})
