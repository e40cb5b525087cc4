/**
 * The webhook worker's configuration, from the environment.
 *
 * | variable | default | what |
 * |---|---|---|
 * | `TRACEBRIDGE_WEBHOOK_WORKER` | true | run the delivery worker and the production poller in this process |
 * | `TRACEBRIDGE_WEBHOOK_TICK_MS` | 1000 | how often the worker looks for due deliveries (it also wakes when one is queued) |
 * | `TRACEBRIDGE_POLL_INTERVAL_SECONDS` | 900 | how often each production connection is polled for events |
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
  )
})
