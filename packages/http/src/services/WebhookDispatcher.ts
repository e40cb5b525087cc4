/**
 * Delivers the outbox (DECISIONS "Webhooks"). Events and their deliveries are rows in the
 * database (`webhook_events`, `webhook_deliveries`), written before anything answers, so a
 * restart loses none. A worker claims due deliveries (`Repo.claimWebhookDeliveries`: on Postgres
 * `FOR UPDATE SKIP LOCKED`, so several API processes share the work; on SQLite one writer at a
 * time, so the claim is atomic for the single process that embedded SQLite is meant for), holds
 * each for a lease longer than the 10 s timeout, signs the stored body, POSTs it, and logs the
 * attempt; an attempt is recorded only once (compare-and-set on the attempt count). An attempt
 * once started is uninterruptible (bounded by the timeout), so a shutdown lets it finish; claimed
 * deliveries not yet started are handed back, due as before.
 *
 * A 2xx within 10 s succeeds. Anything else (an error, a timeout, a redirect, a refused address)
 * is retried after about 1 min, 5 min, 30 min, 2 h, 6 h, 12 h and 24 h, and then the delivery is
 * `failed`. Delivery is at least once: a receiver that answers after our timeout, or a crash
 * between the POST and the log, means it can see an event twice; the event id is stable across
 * attempts, so receivers deduplicate on it.
 *
 * @since 0.1.0
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { WebhookSignature } from "@tracebridge/core"
import { Clock, Context, Duration, Effect, Layer, Option, Queue } from "effect"
import type { WebhookDelivery, WebhookEndpoint } from "../persistence/Repo.js"
import { Repo } from "../persistence/Repo.js"
import { Crypto } from "./Crypto.js"
import { UrlGuard } from "./UrlGuard.js"

/**
 * The wait before each retry: after attempt n fails, attempt n + 1 is due `BACKOFF[n - 1]` later;
 * after attempt `BACKOFF.length + 1` fails, the delivery is `failed`.
 *
 * @since 0.1.0
 * @category constants
 */
export const BACKOFF: ReadonlyArray<Duration.Duration> = [
  Duration.minutes(1),
  Duration.minutes(5),
  Duration.minutes(30),
  Duration.hours(2),
  Duration.hours(6),
  Duration.hours(12),
  Duration.hours(24)
]

/** @since 0.1.0 @category constants */
export const TIMEOUT = Duration.seconds(10)

/** A claim outlives the timeout, so no other worker retries an attempt still in flight. */
const LEASE = Duration.seconds(60)
const BATCH = 20

/** How long the previous secret keeps signing after a rotation. @since 0.1.0 @category constants */
export const ROTATION_OVERLAP = Duration.hours(24)

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Sends every delivery due now (claiming them first); the number of attempts made. */
  readonly runDue: Effect.Effect<number>
  /** Asks the worker loop to run now (after an event is queued or a redelivery asked for). */
  readonly wake: Effect.Effect<void>
  /** The secrets that sign for an endpoint at `now`: the current one, and the previous during a rotation. */
  readonly secretsOf: (endpoint: WebhookEndpoint, now: number) => ReadonlyArray<string>
  /** Runs `runDue` whenever woken, and at least every `interval`; forever. */
  readonly loop: (interval: Duration.Duration) => Effect.Effect<never>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class WebhookDispatcher extends Context.Tag("Webhooks/Dispatcher")<WebhookDispatcher, Service>() {}

/**
 * When the attempt after attempt `n` is due, or undefined when `n` was the last.
 *
 * @since 0.1.0
 * @category backoff
 */
export const nextAttemptAt = (n: number, now: number): number | undefined => {
  const delay = BACKOFF[n - 1]
  return delay === undefined ? undefined : now + Duration.toMillis(delay)
}

/**
 * The dispatcher over the repository, the encryption key, the URL guard and an `HttpClient`
 * (which must not follow redirects: `Http.ts` gives it `redirect: "manual"`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(
  WebhookDispatcher,
  Effect.gen(function*() {
    const repo = yield* Repo
    const crypto = yield* Crypto
    const guard = yield* UrlGuard
    const client = yield* HttpClient.HttpClient
    const wakeUp = yield* Queue.sliding<void>(1)

    const secretsOf: Service["secretsOf"] = (endpoint, now) => [
      crypto.decrypt(endpoint.secret, endpoint.key_id),
      ...(endpoint.previous_secret !== null && endpoint.previous_key_id !== null &&
          endpoint.previous_expires_at !== null && endpoint.previous_expires_at > now
        ? [crypto.decrypt(endpoint.previous_secret, endpoint.previous_key_id)]
        : [])
    ]

    /** One attempt: what happened, never a failure. */
    const attempt = (delivery: WebhookDelivery) =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const endpoint = yield* repo.getWebhookEndpoint(delivery.endpoint_id)
        const event = yield* repo.getWebhookEvent(delivery.event_id)
        if (Option.isNone(endpoint) || Option.isNone(event)) {
          return { started, status_code: null, error: "the endpoint or event no longer exists", final: true }
        }
        if (endpoint.value.status === "disabled") {
          return { started, status_code: null, error: "the endpoint is disabled", final: true }
        }
        const organisation = yield* repo.getOrganisation(endpoint.value.organisation_id)
        const plan = Option.match(organisation, { onNone: () => "production" as const, onSome: (o) => o.plan })
        const refused = yield* Effect.flip(guard.check(endpoint.value.url, plan)).pipe(Effect.option)
        if (Option.isSome(refused)) {
          return { started, status_code: null, error: `refused: ${refused.value}`, final: false }
        }
        const body = event.value.body
        const signature = yield* WebhookSignature.sign(
          secretsOf(endpoint.value, started),
          Math.floor(started / 1000),
          body
        )
        const request = HttpClientRequest.post(endpoint.value.url).pipe(
          HttpClientRequest.setHeaders({
            [WebhookSignature.headers.signature]: signature,
            [WebhookSignature.headers.eventId]: event.value.id,
            [WebhookSignature.headers.eventType]: event.value.type,
            "user-agent": "Tracebridge-Webhooks/0.1"
          }),
          HttpClientRequest.bodyText(body, "application/json")
        )
        return yield* client.execute(request).pipe(
          Effect.flatMap((response) => Effect.as(Effect.ignore(response.text), response.status)),
          Effect.scoped,
          Effect.timeoutFail({ duration: TIMEOUT, onTimeout: () => "timed out after 10 s" }),
          Effect.match({
            onFailure: (e) => ({
              started,
              status_code: null,
              error: typeof e === "string" ? e : `request failed: ${e._tag === "RequestError" ? e.reason : e.reason}`,
              final: false
            }),
            onSuccess: (status) => ({
              started,
              status_code: status,
              error: status >= 200 && status < 300 ? null : `answered ${status}`,
              final: false
            })
          })
        )
      })

    const deliver = (delivery: WebhookDelivery) =>
      Effect.gen(function*() {
        const result = yield* attempt(delivery)
        const ended = yield* Clock.currentTimeMillis
        const n = delivery.attempts + 1
        const ok = result.error === null
        const next = ok || result.final ? undefined : nextAttemptAt(n, ended)
        yield* repo.recordWebhookAttempt(
          {
            delivery_id: delivery.id,
            n,
            at: result.started,
            status_code: result.status_code,
            error: result.error,
            duration_ms: Math.max(0, ended - result.started)
          },
          ok
            ? { status: "succeeded", next_attempt_at: null }
            : next === undefined
            ? { status: "failed", next_attempt_at: null }
            : { status: "pending", next_attempt_at: next }
        )
      }).pipe(
        Effect.catchAllDefect((defect) => Effect.logError("webhook delivery crashed", delivery.id, defect)),
        Effect.withSpan("WebhookDispatcher.deliver", { attributes: { delivery: delivery.id } })
      )

    const runDue: Effect.Effect<number> = Effect.gen(function*() {
      let total = 0
      while (true) {
        const now = yield* Clock.currentTimeMillis
        const claimed = yield* repo.claimWebhookDeliveries(now, now + Duration.toMillis(LEASE), BATCH)
        if (claimed.length === 0) return total
        // An attempt once started runs to its end (at most the 10 s timeout) even when the worker
        // is interrupted (shutdown); the claimed ones not started yet are handed back, due as before.
        const started = new Set<string>()
        yield* Effect.forEach(
          claimed,
          (delivery) =>
            Effect.uninterruptible(Effect.zipRight(Effect.sync(() => started.add(delivery.id)), deliver(delivery))),
          { concurrency: 8, discard: true }
        ).pipe(
          Effect.onInterrupt(() =>
            Effect.forEach(
              claimed.filter((delivery) => !started.has(delivery.id)),
              (delivery) => repo.retryWebhookDelivery(delivery.id, delivery.next_attempt_at ?? now),
              { discard: true }
            )
          )
        )
        total += claimed.length
      }
    })

    const service: Service = {
      runDue,
      wake: Effect.asVoid(Queue.offer(wakeUp, undefined)),
      secretsOf,
      loop: (interval) =>
        Effect.forever(
          Effect.zipRight(
            Effect.catchAllCause(runDue, (cause) => Effect.logError("webhook worker", cause)),
            Effect.race(Effect.sleep(interval), Queue.take(wakeUp))
          )
        )
    }
    return service
  })
)
