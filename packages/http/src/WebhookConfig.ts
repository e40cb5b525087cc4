/**
 * The webhook worker's configuration, from the environment.
 *
 * | variable | default | what |
 * |---|---|---|
 * | `TRACEBRIDGE_WEBHOOK_WORKER` | true | run the delivery worker and the production poller in this process |
 * | `TRACEBRIDGE_WEBHOOK_TICK_MS` | 1000 | how often the worker looks for due deliveries (it also wakes when one is queued) |
 * | `TRACEBRIDGE_POLL_INTERVAL_SECONDS` | 900 | how often each production connection is polled for events |
 * | `TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS` | 30 | on shutdown, how long webhook attempts in flight may take before they are abandoned (due again at once) |
 *
 * @since 0.1.0
 */
import { Config, Duration } from "effect"

/**
 * @since 0.1.0
 * @category config
 */
export const worker = Config.all({
  enabled: Config.boolean("TRACEBRIDGE_WEBHOOK_WORKER").pipe(Config.withDefault(true)),
  tick: Config.integer("TRACEBRIDGE_WEBHOOK_TICK_MS").pipe(Config.withDefault(1000), Config.map(Duration.millis)),
  pollInterval: Config.integer("TRACEBRIDGE_POLL_INTERVAL_SECONDS").pipe(
    Config.withDefault(900),
    Config.map(Duration.seconds)
  ),
  // The server's shutdown grace (`AppConfig.server`), which the worker's attempts in flight get too.
  shutdownGrace: Config.number("TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS").pipe(
    Config.validate({ message: "must be >= 0", validation: (n) => n >= 0 }),
    Config.withDefault(30),
    Config.map(Duration.seconds)
  )
})
