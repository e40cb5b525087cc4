/**
 * Delivers the outbox (DECISIONS "Webhooks"). Events and their deliveries are rows in the
 * database (`webhook_events`, `webhook_deliveries`), written before anything answers, so a
 * restart loses none. A worker claims due deliveries (`WebhookStore.claimWebhookDeliveries`: on Postgres
 * `FOR UPDATE SKIP LOCKED`, so several API processes share the work; on SQLite one writer at a
 * time, so the claim is atomic for the single process that embedded SQLite is meant for), holds
 * each for a lease longer than the 10 s timeout, signs the stored body, POSTs it, and logs the
 * attempt; an attempt is recorded only once (compare-and-set on the attempt count). An attempt
 * once started is uninterruptible (bounded by the timeout), so a shutdown lets it finish; claimed
 * deliveries not yet started are handed back, due as before.
 *
 * The fast path (simulate): when this process runs the worker, `holdUntil` gives the lease that an
 * event's deliveries are written with, in the transaction that queues them, so they are claimed by
 * this process from the start; after the commit, `send` hands them to the worker with the endpoint,
 * event and plan read in that transaction, and the first attempt starts at once, with no claim, no
 * re-read and no wait for a tick. The URL guard still runs right before it. If `send` never runs (a
 * crash after the commit), the lease lapses and any worker claims them; on shutdown, held deliveries
 * not started are handed back like claimed ones.
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
import { Clock, Context, Duration, Effect, FiberSet, Layer, Option, Queue } from "effect"
import { createHmac } from "node:crypto"
import type { Plan } from "../persistence/Accounts.js"
import { Accounts } from "../persistence/Accounts.js"
import type { WebhookDelivery, WebhookEndpoint, WebhookEventRow } from "../persistence/WebhookStore.js"
import { WebhookStore } from "../persistence/WebhookStore.js"
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

/** At most this many attempts at once, per batch of claimed deliveries and for handed ones. */
const CONCURRENCY = 8

/** How long the previous secret keeps signing after a rotation. @since 0.1.0 @category constants */
export const ROTATION_OVERLAP = Duration.hours(24)

/**
 * A delivery written already claimed by this process (`holdUntil`), with what its attempt needs,
 * read in the transaction that queued it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Held {
  readonly delivery: WebhookDelivery
  readonly endpoint: WebhookEndpoint
  readonly event: WebhookEventRow
  readonly plan: Plan
}

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
  /**
   * The lease (`locked_until`) to write on deliveries queued now so that this process's worker
   * holds them, for `send` after the commit; `undefined` when no worker runs here (or it is
   * stopping): queue them unclaimed and `wake` instead.
   */
  readonly holdUntil: Effect.Effect<number | undefined>
  /**
   * Hands deliveries written with `holdUntil`'s lease to the worker; run it after their transaction
   * committed. A worker that stopped meanwhile hands them back to the queue, due as they were.
   */
  readonly send: (held: ReadonlyArray<Held>) => Effect.Effect<void>
  /** Runs `runDue` whenever woken, and at least every `interval`, and sends what `send` hands it; forever. */
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
 * The `X-Tracebridge-Signature` header, as `WebhookSignature.sign` makes it (`t=<timestamp>` and one
 * `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">` per secret), computed at once with node:crypto:
 * Web Crypto's HMAC takes two trips through the thread pool per secret, on the way to every POST.
 *
 * @since 0.1.0
 * @category signing
 */
export const signatureHeader = (secrets: ReadonlyArray<string>, timestamp: number, body: string): string => {
  const payload = WebhookSignature.signedPayload(timestamp, body)
  return WebhookSignature.format(
    timestamp,
    secrets.map((secret) => createHmac("sha256", secret).update(payload).digest("hex"))
  )
}

/**
 * The client that production organisations' deliveries go out through (`Http.ts` gives it a
 * node:http agent whose DNS lookup refuses non-public addresses at connect time). Without it,
 * they use the `HttpClient` the sandbox deliveries use.
 *
 * @since 0.1.0
 * @category tags
 */
export class ProductionDeliveryClient
  extends Context.Tag("Webhooks/ProductionDeliveryClient")<ProductionDeliveryClient, HttpClient.HttpClient>()
{}

/**
 * The dispatcher over the webhook store and the organisations, the encryption key, the URL guard and an `HttpClient`
 * (which must not follow redirects: `Http.ts` gives it node:http, which never does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(
  WebhookDispatcher,
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const webhookStore = yield* WebhookStore
    const crypto = yield* Crypto
    const guard = yield* UrlGuard
    const sandboxClient = yield* HttpClient.HttpClient
    const productionClient = Option.getOrElse(
      yield* Effect.serviceOption(ProductionDeliveryClient),
      () => sandboxClient
    )
    const wakeUp = yield* Queue.sliding<void>(1)

    const secretsOf: Service["secretsOf"] = (endpoint, now) => [
      crypto.decrypt(endpoint.secret, endpoint.key_id),
      ...(endpoint.previous_secret !== null && endpoint.previous_key_id !== null &&
          endpoint.previous_expires_at !== null && endpoint.previous_expires_at > now
        ? [crypto.decrypt(endpoint.previous_secret, endpoint.previous_key_id)]
        : [])
    ]

    interface Attempt {
      readonly started: number
      readonly status_code: number | null
      readonly error: string | null
      readonly final: boolean
    }

    /** One attempt of a claimed delivery, reading its endpoint, event and plan now. */
    const attempt = (delivery: WebhookDelivery): Effect.Effect<Attempt> =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const endpoint = yield* webhookStore.getWebhookEndpoint(delivery.endpoint_id)
        const event = yield* webhookStore.getWebhookEvent(delivery.event_id)
        if (Option.isNone(endpoint) || Option.isNone(event)) {
          return { started, status_code: null, error: "the endpoint or event no longer exists", final: true }
        }
        if (endpoint.value.status === "disabled") {
          return { started, status_code: null, error: "the endpoint is disabled", final: true }
        }
        const organisation = yield* accounts.getOrganisation(endpoint.value.organisation_id)
        const plan = Option.match(organisation, { onNone: () => "production" as const, onSome: (o) => o.plan })
        return yield* post(started, endpoint.value, event.value, plan)
      })

    /** The attempt of a held delivery, with what was read when it was queued. */
    const attemptHeld = (held: Held): Effect.Effect<Attempt> =>
      Effect.flatMap(Clock.currentTimeMillis, (started) =>
        held.endpoint.status === "disabled"
          ? Effect.succeed({ started, status_code: null, error: "the endpoint is disabled", final: true })
          : post(started, held.endpoint, held.event, held.plan))

    /** Checks the address, signs and POSTs: what happened, never a failure. */
    const post = (
      started: number,
      endpoint: WebhookEndpoint,
      event: WebhookEventRow,
      plan: Plan
    ): Effect.Effect<Attempt> =>
      Effect.gen(function*() {
        const refused = yield* Effect.flip(guard.check(endpoint.url, plan)).pipe(Effect.option)
        if (Option.isSome(refused)) {
          return { started, status_code: null, error: `refused: ${refused.value}`, final: false }
        }
        const body = event.body
        const signature = signatureHeader(secretsOf(endpoint, started), Math.floor(started / 1000), body)
        const request = HttpClientRequest.post(endpoint.url).pipe(
          HttpClientRequest.setHeaders({
            [WebhookSignature.headers.signature]: signature,
            [WebhookSignature.headers.eventId]: event.id,
            [WebhookSignature.headers.eventType]: event.type,
            "user-agent": "Tracebridge-Webhooks/0.1"
          }),
          HttpClientRequest.bodyText(body, "application/json")
        )
        const client = plan === "production" ? productionClient : sandboxClient
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

    const deliver = (delivery: WebhookDelivery, run: Effect.Effect<Attempt> = attempt(delivery)) =>
      Effect.gen(function*() {
        const result = yield* run
        const ended = yield* Clock.currentTimeMillis
        const n = delivery.attempts + 1
        const ok = result.error === null
        const next = ok || result.final ? undefined : nextAttemptAt(n, ended)
        yield* webhookStore.recordWebhookAttempt(
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

    /** Hands a delivery back to the queue, due as it was (a claim or a hold that was not used). */
    const handBack = (delivery: WebhookDelivery, now: number) =>
      webhookStore.retryWebhookDelivery(delivery.id, delivery.next_attempt_at ?? now)

    // Held deliveries waiting for the worker, and whether a worker loop runs to take them.
    const handed = yield* Queue.unbounded<Held>()
    let accepting = false

    /**
     * Whether a held delivery's lease still covers a whole attempt. One that waited longer (slow
     * receivers ahead of it) is left alone: its lease lapses and a claim takes it, so it is never
     * sent by this process and by a claim at once.
     */
    const stillHeld = (held: Held, now: number) =>
      held.delivery.locked_until !== null && held.delivery.locked_until - now > Duration.toMillis(TIMEOUT)

    /**
     * Sends what `send` hands over, up to `CONCURRENCY` at once, each as soon as a slot is free.
     * An attempt once started runs to its end; on interruption the ones still waiting are handed back.
     */
    const sendHanded: Effect.Effect<never> = Effect.gen(function*() {
      const inFlight = yield* FiberSet.make<void>()
      const slots = yield* Effect.makeSemaphore(CONCURRENCY)
      return yield* Effect.forever(
        Effect.zipRight(
          slots.take(1),
          Effect.uninterruptibleMask((restore) =>
            Effect.flatMap(
              Effect.zip(restore(Queue.take(handed)), Clock.currentTimeMillis),
              ([held, now]) =>
                stillHeld(held, now)
                  ? Effect.asVoid(FiberSet.run(
                    inFlight,
                    Effect.uninterruptible(deliver(held.delivery, attemptHeld(held))).pipe(
                      Effect.ensuring(slots.release(1))
                    )
                  ))
                  : Effect.asVoid(slots.release(1))
            )
          )
        )
      )
    }).pipe(
      Effect.scoped,
      Effect.onInterrupt(() =>
        Effect.gen(function*() {
          accepting = false
          const now = yield* Clock.currentTimeMillis
          const left = yield* Queue.takeAll(handed)
          yield* Effect.forEach(
            left,
            (held) => stillHeld(held, now) ? handBack(held.delivery, now) : Effect.void,
            { discard: true }
          )
        })
      )
    )

    const runDue: Effect.Effect<number> = Effect.gen(function*() {
      let total = 0
      while (true) {
        const now = yield* Clock.currentTimeMillis
        const claimed = yield* webhookStore.claimWebhookDeliveries(now, now + Duration.toMillis(LEASE), BATCH)
        if (claimed.length === 0) return total
        // An attempt once started runs to its end (at most the 10 s timeout) even when the worker
        // is interrupted (shutdown); the claimed ones not started yet are handed back, due as before.
        const started = new Set<string>()
        yield* Effect.forEach(
          claimed,
          (delivery) =>
            Effect.uninterruptible(Effect.zipRight(Effect.sync(() => started.add(delivery.id)), deliver(delivery))),
          { concurrency: CONCURRENCY, discard: true }
        ).pipe(
          Effect.onInterrupt(() =>
            Effect.forEach(
              claimed.filter((delivery) => !started.has(delivery.id)),
              (delivery) => handBack(delivery, now),
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
      holdUntil: Effect.map(
        Clock.currentTimeMillis,
        (now) => accepting ? now + Duration.toMillis(LEASE) : undefined
      ),
      send: (held) =>
        Effect.suspend(() => {
          if (held.length === 0) return Effect.void
          // Checked and offered in one step: a worker stopping now either takes them or has
          // already stopped accepting, and then they go back to the queue here.
          if (accepting) {
            for (const h of held) handed.unsafeOffer(h)
            return Effect.void
          }
          return Effect.flatMap(
            Clock.currentTimeMillis,
            (now) =>
              Effect.forEach(held, (h) => stillHeld(h, now) ? handBack(h.delivery, now) : Effect.void, {
                discard: true
              })
          )
        }),
      loop: (interval) =>
        Effect.suspend(() => {
          accepting = true
          return Effect.race(
            sendHanded,
            Effect.forever(
              Effect.zipRight(
                Effect.catchAllCause(runDue, (cause) => Effect.logError("webhook worker", cause)),
                Effect.race(Effect.sleep(interval), Queue.take(wakeUp))
              )
            )
          )
        }).pipe(Effect.ensuring(Effect.sync(() => {
          accepting = false
        })))
    }
    return service
  })
)
