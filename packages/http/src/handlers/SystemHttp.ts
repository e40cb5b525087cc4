/**
 * @since 0.1.0
 */
import { HttpApiBuilder } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { Cause, Duration, Effect } from "effect"
import * as Errors from "../Errors.js"
import { Transactions } from "../persistence/Transactions.js"

/**
 * How long `/healthz` waits for its database probe before it answers 503.
 *
 * @since 0.1.0
 * @category constants
 */
export const HEALTH_PROBE_TIMEOUT = Duration.seconds(2)

/**
 * @since 0.1.0
 * @category layers
 */
export const HttpSystemLive = HttpApiBuilder.group(
  Api,
  "system",
  (handlers) =>
    Effect.gen(function*() {
      const transactions = yield* Transactions
      return handlers.handle("health", () =>
        // The same way to the database as a write takes (issue #28: a wedged database once left
        // every request hanging while this said ok): a transaction, bounded.
        transactions.probe.pipe(
          Effect.timeoutFail({ duration: HEALTH_PROBE_TIMEOUT, onTimeout: () => "timed out" as const }),
          Effect.as({ status: "ok" as const }),
          Effect.catchAllCause((cause) =>
            Effect.zipRight(
              Effect.logWarning("health probe failed").pipe(
                Effect.annotateLogs({
                  reason: Cause.isInterruptedOnly(cause) ? "interrupted" : Cause.pretty(cause).split("\n")[0]
                })
              ),
              Effect.flatMap(Errors.serviceUnavailable, Effect.fail)
            )
          )
        ))
    })
)
