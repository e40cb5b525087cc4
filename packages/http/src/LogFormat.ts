/**
 * The format of the service's log lines: `TRACEBRIDGE_LOG_FORMAT`, `text` (default: Effect's
 * pretty logger, as before) or `json`, one JSON object per line:
 *
 * | field | what |
 * |---|---|
 * | `timestamp` | ISO 8601, UTC |
 * | `level` | `DEBUG`, `INFO`, `WARN`, `ERROR`, `FATAL` |
 * | `message` | the message (an array when several values were logged) |
 * | `cause` | the rendered cause of a failure, when one was logged |
 * | `fiber` | the fiber that logged, e.g. `#12` |
 * | `annotations` | the log annotations, e.g. `request_id`, `http.method`, `http.url`, `http.status` |
 * | `spans` | the log spans (`Effect.withLogSpan`) and their milliseconds so far |
 * | `trace_id`, `span_id` | the current span's, when the fiber has one (with tracing on, the ids exported over OTLP) |
 *
 * The object is built by Effect's `Logger.structuredLogger` and written through Effect's
 * `Console`, which `main.ts` makes the redacting console (`Redact.ts`): the same redaction as the
 * text lines, applied to the whole line.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import { Config, Context, Effect as E, FiberRef, FiberRefs, HashSet, Inspectable, Logger, Option, Tracer } from "effect"

/**
 * `TRACEBRIDGE_LOG_FORMAT`: `text` (default) or `json`.
 *
 * @since 0.1.0
 * @category config
 */
export const format: Config.Config<"text" | "json"> = Config.string("TRACEBRIDGE_LOG_FORMAT").pipe(
  Config.validate({
    message: "must be text or json",
    validation: (s): s is "text" | "json" => s === "text" || s === "json"
  }),
  Config.withDefault("text" as const)
)

/**
 * The trace and span ids of the fiber's current span, if it has one.
 *
 * @since 0.1.0
 * @category formatting
 */
export const traceOf = (
  refs: FiberRefs.FiberRefs
): { readonly trace_id: string; readonly span_id: string } | undefined => {
  const span = Context.getOption(FiberRefs.getOrDefault(refs, FiberRef.currentContext), Tracer.ParentSpan)
  return Option.isSome(span) ? { trace_id: span.value.traceId, span_id: span.value.spanId } : undefined
}

/**
 * One log line as a JSON object (see the module's table), not yet written.
 *
 * @since 0.1.0
 * @category loggers
 */
export const jsonLine: Logger.Logger<unknown, string> = Logger.make((options) => {
  const structured = Logger.structuredLogger.log(options)
  return Inspectable.stringifyCircular({
    timestamp: structured.timestamp,
    level: structured.logLevel,
    message: structured.message,
    ...(structured.cause === undefined ? {} : { cause: structured.cause }),
    fiber: structured.fiberId,
    annotations: structured.annotations,
    spans: structured.spans,
    ...traceOf(options.context)
  })
})

/**
 * {@link jsonLine}, written through Effect's `Console` (the redacting console under `main.ts`).
 *
 * @since 0.1.0
 * @category loggers
 */
export const jsonLogger: Logger.Logger<unknown, void> = Logger.withConsoleLog(jsonLine)

/**
 * Runs `self` with the configured format: with `json`, {@link jsonLogger} in place of the
 * default and pretty loggers; with `text`, as it is. A value other than `text` or `json` fails
 * with a `ConfigError` naming the variable, logged as text.
 *
 * @since 0.1.0
 * @category combinators
 */
export const logging = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  E.flatMap(
    E.tapError(format, (error) => E.logError(`Cannot start: ${String(error)}`)),
    (chosen) =>
      chosen === "text" ? self : E.locallyWith(self, FiberRef.currentLoggers, (loggers) =>
        HashSet.add(
          HashSet.remove(HashSet.remove(loggers, Logger.defaultLogger), Logger.prettyLoggerDefault),
          jsonLogger
        ))
  )
