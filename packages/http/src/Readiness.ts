/**
 * Health for operators and load balancers, outside the `/v1` document (DECISIONS "Turn 3
 * additions", issue #32):
 *
 * - `GET /livez`: 200 `{"status":"ok"}` while the process answers; it asks nothing of the database.
 * - `GET /readyz`: 200 `{"status":"ok"}` only when this node can take traffic, else 503
 *   `{"status":"unavailable","reason":…}`, the reason naming the first check that failed:
 *   - `draining`: the process got SIGTERM or SIGINT and is shutting down (`main.ts`);
 *   - `database`: a transaction with one read did not answer within {@link PROBE_TIMEOUT} (the
 *     same probe as `/healthz`);
 *   - `migrations`: the database lacks a migration this code knows (`MigrationState`);
 *   - `workers`: this node runs the workers (`TRACEBRIDGE_WEBHOOK_WORKER`) and one of them (the
 *     webhook dispatcher, the sync scheduler, the webhook poller) has stopped.
 *
 * Both answer with `Cache-Control: no-store`. `/healthz` (in the contract) stays as it was.
 *
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import type { ConfigError, Fiber } from "effect"
import { Cause, Config, Context, Duration, Effect, Layer, Option, Ref } from "effect"
import { MigrationState } from "./persistence/MigrationState.js"
import { Transactions } from "./persistence/Transactions.js"

/**
 * How long `/readyz` waits for its database probe (with the migrations read) before it answers 503.
 *
 * @since 0.1.0
 * @category constants
 */
export const PROBE_TIMEOUT = Duration.seconds(2)

/**
 * Why a node is not ready.
 *
 * @since 0.1.0
 * @category models
 */
export type Reason = "draining" | "database" | "migrations" | "workers"

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Marks the node as shutting down: `/readyz` answers 503 `draining` from now on. */
  readonly drain: Effect.Effect<void>
  /** Whether {@link Service.drain} was called. */
  readonly draining: Effect.Effect<boolean>
  /** Watches a worker's fiber: the node is not ready once it has ended (unless draining). */
  readonly watch: (name: string, fiber: Fiber.Fiber<unknown, unknown>) => Effect.Effect<void>
  /** The workers watched that have ended. */
  readonly stopped: Effect.Effect<ReadonlyArray<string>>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Readiness extends Context.Tag("Tracebridge/Readiness")<Readiness, Service>() {}

/**
 * A fresh, ready state.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service> = Effect.gen(function*() {
  const draining = yield* Ref.make(false)
  const workers = yield* Ref.make<ReadonlyArray<readonly [string, Fiber.Fiber<unknown, unknown>]>>([])
  return {
    drain: Ref.set(draining, true),
    draining: Ref.get(draining),
    watch: (name, fiber) => Ref.update(workers, (all) => [...all, [name, fiber] as const]),
    stopped: Effect.flatMap(Ref.get(workers), (all) =>
      Effect.map(
        Effect.forEach(all, ([name, fiber]) => Effect.map(fiber.poll, (exit) => Option.isSome(exit) ? [name] : [])),
        (names) => names.flat()
      ))
  }
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Readiness> = Layer.effect(Readiness, make)

/**
 * The first reason this node is not ready, if any.
 *
 * @since 0.1.0
 * @category checks
 */
export const check: Effect.Effect<Option.Option<Reason>, never, Readiness | Transactions | MigrationState> = Effect
  .gen(
    function*() {
      const readiness = yield* Readiness
      if (yield* readiness.draining) return Option.some<Reason>("draining")
      const transactions = yield* Transactions
      const migrations = yield* MigrationState
      const database = yield* transactions.probe.pipe(
        Effect.zipRight(migrations.pending),
        Effect.timeoutFail({ duration: PROBE_TIMEOUT, onTimeout: () => "timed out" as const }),
        Effect.map((pending): Option.Option<Reason> => pending.length > 0 ? Option.some("migrations") : Option.none()),
        Effect.catchAllCause((cause) =>
          Effect.as(
            Effect.logWarning("readiness probe failed").pipe(
              Effect.annotateLogs({
                reason: Cause.isInterruptedOnly(cause) ? "interrupted" : Cause.pretty(cause).split("\n")[0]
              })
            ),
            Option.some<Reason>("database")
          )
        )
      )
      if (Option.isSome(database)) return database
      const stopped = yield* readiness.stopped
      if (stopped.length > 0) {
        yield* Effect.logWarning("readiness: a worker has stopped").pipe(
          Effect.annotateLogs({ workers: stopped.join(",") })
        )
        return Option.some<Reason>("workers")
      }
      return Option.none()
    }
  )

const noStore = { "cache-control": "no-store" }

/**
 * `/livez` and `/readyz`, as a layer for `HttpApiBuilder.serve` (routes of the router, not of the
 * contract: neither is in the `/v1` document).
 *
 * @since 0.1.0
 * @category layers
 */
export const routes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const readiness = yield* Readiness
    const transactions = yield* Transactions
    const migrations = yield* MigrationState
    const checked = check.pipe(
      Effect.provideService(Readiness, readiness),
      Effect.provideService(Transactions, transactions),
      Effect.provideService(MigrationState, migrations)
    )
    yield* router.get(
      "/livez",
      Effect.succeed(HttpServerResponse.unsafeJson({ status: "ok" }, { headers: noStore }))
    )
    yield* router.get(
      "/readyz",
      Effect.map(checked, (reason) =>
        Option.match(reason, {
          onNone: () => HttpServerResponse.unsafeJson({ status: "ok" }, { headers: noStore }),
          onSome: (reason) =>
            HttpServerResponse.unsafeJson({ status: "unavailable", reason }, { status: 503, headers: noStore })
        }))
    )
  })
)

/**
 * `TRACEBRIDGE_DRAIN_SECONDS` (default 0, at least 0): after SIGTERM or SIGINT, how long the node
 * keeps serving, new connections included, with `/readyz` answering 503 `draining`, before the
 * workers stop and the server stops accepting connections. Behind a load balancer, set it to the
 * time the balancer takes to see a failed readiness check (its interval times its failure
 * threshold), so that no new request reaches a closed port.
 *
 * @since 0.1.0
 * @category config
 */
export const drainDelay: Config.Config<Duration.Duration> = Config.number("TRACEBRIDGE_DRAIN_SECONDS").pipe(
  Config.validate({ message: "must be >= 0", validation: (n) => n >= 0 }),
  Config.withDefault(0),
  Config.map(Duration.seconds)
)

/**
 * The first thing to close on shutdown (build it after everything else, so that it is released
 * first): `/readyz` turns 503 `draining` at once, then the node keeps serving for
 * {@link drainDelay} before the rest closes.
 *
 * @since 0.1.0
 * @category layers
 */
export const drainOnShutdown: Layer.Layer<never, ConfigError.ConfigError, Readiness> = Layer.scopedDiscard(
  Effect.gen(function*() {
    const delay = yield* drainDelay
    const readiness = yield* Readiness
    yield* Effect.addFinalizer(() =>
      Effect.zipRight(
        Effect.zipRight(
          readiness.drain,
          Effect.logInfo("draining: /readyz answers 503").pipe(
            Effect.annotateLogs({ drain_seconds: Duration.toSeconds(delay) })
          )
        ),
        Effect.sleep(delay)
      )
    )
  })
)
