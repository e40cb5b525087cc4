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
import { Config, Effect } from "effect"

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
 * How many successful responses make one log line: `TRACEBRIDGE_ACCESS_LOG_EVERY` (default 100:
 * the 1st, 101st, 201st… success is logged; 1 logs every response; 0 logs none). Every 4xx, 5xx
 * and failure is always logged. A line per success costs about a tenth of a fast request's time
 * (formatting and a synchronous write to stdout); the sampled line keeps the traffic visible.
 *
 * @since 0.1.0
 * @category config
 */
export const every: Config.Config<number> = Config.integer("TRACEBRIDGE_ACCESS_LOG_EVERY").pipe(
  Config.withDefault(100),
  Config.validate({ message: "must be >= 0", validation: (n) => n >= 0 })
)

/**
 * The middleware: logs responses with `http.method`, `http.url` (redacted) and `http.status`:
 * every failure and every status of 400 or more, and one success in `everySuccess`.
 *
 * @since 0.1.0
 * @category middleware
 */
export const make = (
  everySuccess: number
): <E, R>(app: HttpApp.Default<E, R>) => HttpApp.Default<E, R> =>
  HttpMiddleware.make((app) => {
    let counter = 0
    let successes = 0
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const span = `http.span.${++counter}`
      const line = (message: unknown, status: number) =>
        Effect.withLogSpan(
          Effect.annotateLogs(Effect.log(message), {
            "http.method": request.method,
            "http.url": redactUrl(request.url),
            "http.status": status
          }),
          span
        )
      return Effect.flatMap(Effect.exit(app), (exit) => {
        if (exit._tag === "Failure") {
          const [response, cause] = HttpServerError.causeResponseStripped(exit.cause)
          return Effect.zipRight(
            line(cause._tag === "Some" ? cause.value : "Sent HTTP Response", response.status),
            exit
          )
        }
        const status = exit.value.status
        const logged = status >= 400 || (everySuccess > 0 && successes++ % everySuccess === 0)
        return logged ? Effect.zipRight(line("Sent HTTP response", status), exit) : exit
      })
    })
  })

/**
 * The middleware logging every response (tests, and `TRACEBRIDGE_ACCESS_LOG_EVERY=1`).
 *
 * @since 0.1.0
 * @category middleware
 */
export const logger: <E, R>(app: HttpApp.Default<E, R>) => HttpApp.Default<E, R> = make(1)
