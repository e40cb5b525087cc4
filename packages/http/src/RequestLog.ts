/**
 * The request log: one line per response, like `HttpMiddleware.logger` (method, URL, status and a
 * log span), with secrets redacted twice over. By name: a query parameter whose name may carry a
 * secret has its value replaced by `REDACTED`. By value: every token Tracebridge issues, wherever it
 * is in the URL (path, query string, any parameter name or value), is written as its prefix and
 * `[REDACTED]` (`Redact.ts`); so is a token in the message of a failure. The hosted Connect page
 * and its session endpoint take the link token in the query string (`/connect?link_token=…`), a
 * client may put one under any name (`?lt=link-sandbox-…`) or in a path, and a log line must never
 * hold a token. (`main.ts` also redacts every line as it is written; this keeps the access log
 * clean under any logger.)
 *
 * @since 0.1.0
 */
import type { HttpApp } from "@effect/platform"
import { HttpMiddleware, HttpServerError, HttpServerRequest } from "@effect/platform"
import { Cause, Config, Effect } from "effect"
import * as Redact from "./Redact.js"

const sensitive = Redact.sensitiveName

const decodeName = (name: string) => {
  try {
    return decodeURIComponent(name.replaceAll("+", " "))
  } catch {
    return name
  }
}

/**
 * A request URL (path and query) with the values of sensitive query parameters written as
 * `REDACTED`, then every issued token as its prefix and `[REDACTED]`; the rest is kept as sent.
 *
 * @since 0.1.0
 * @category redaction
 */
export const redactUrl = (url: string): string => {
  const q = url.indexOf("?")
  if (q < 0) return Redact.text(url)
  const query = url.slice(q + 1).split("&").map((pair) => {
    const eq = pair.indexOf("=")
    return eq >= 0 && sensitive.test(decodeName(pair.slice(0, eq))) ? `${pair.slice(0, eq)}=REDACTED` : pair
  })
  return Redact.text(`${url.slice(0, q)}?${query.join("&")}`)
}

/** A failure's cause as logged: the cause itself, or its rendering redacted when that holds a token. */
const redactCause = (cause: Cause.Cause<unknown>): unknown => {
  const rendered = Cause.pretty(cause, { renderErrorCause: true })
  const redacted = Redact.text(rendered)
  return redacted === rendered ? cause : redacted
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
  Config.validate({ message: "must be >= 0", validation: (n) => n >= 0 }),
  Config.withDefault(100)
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
      const line = (message: unknown, status: number, requestId: string | undefined) =>
        Effect.withLogSpan(
          Effect.annotateLogs(Effect.log(message), {
            "http.method": request.method,
            "http.url": redactUrl(request.url),
            "http.status": status,
            // the id the client was told (`X-Request-Id`), so that a quoted id finds its line
            ...(requestId === undefined ? {} : { request_id: requestId })
          }),
          span
        )
      return Effect.flatMap(Effect.exit(app), (exit) => {
        if (exit._tag === "Failure") {
          const [response, cause] = HttpServerError.causeResponseStripped(exit.cause)
          return Effect.zipRight(
            line(
              cause._tag === "Some" ? redactCause(cause.value) : "Sent HTTP Response",
              response.status,
              response.headers["x-request-id"]
            ),
            exit
          )
        }
        const status = exit.value.status
        const logged = status >= 400 || (everySuccess > 0 && successes++ % everySuccess === 0)
        return logged
          ? Effect.zipRight(line("Sent HTTP response", status, exit.value.headers["x-request-id"]), exit)
          : exit
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
