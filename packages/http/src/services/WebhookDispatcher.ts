/**
 * Delivers the outbox (DECISIONS "Webhooks"). Events and their deliveries are rows in the
 * database (`webhook_events`, `webhook_deliveries`), written before anything answers, so a
 * restart loses none. A worker claims due deliveries (`WebhookStore.claimWebhookDeliveries`: on Postgres
 * `FOR UPDATE SKIP LOCKED`, so several API processes share the work; on SQLite one writer at a
 * time, so the claim is atomic for the single process that embedded SQLite is meant for), holds
 * each for a lease longer than the 10 s timeout, signs the stored body, POSTs it, and logs the
 * attempt; an attempt is recorded only once (compare-and-set on the attempt count).
 *
 * Bounded in every dimension (issue #28, `docs/security.md`):
 * - a receiver's answer is read up to `READ_LIMIT` (64 KB), then the stream is dropped and the
 *   connection aborted; at most `LOG_LIMIT` (1 KB) of it (an excerpt of a non-2xx answer, redacted
 *   as the preview is) goes into the delivery log, and no logged error is longer; the attempt keeps a preview of the answer
 *   for the dashboard (`response_preview`, issue #33): at most `PREVIEW_LIMIT` (2 KB), redacted
 *   (`previewOf`: issued tokens and configured secrets by value, and every value under a
 *   secret-looking JSON key), never a request header;
 * - connect, headers and body together have 10 s (`TIMEOUT`), and the attempt is interruptible
 *   throughout: the timeout, and a shutdown, really stop it. Only recording its result is protected;
 * - a scheduler runs at most `CONCURRENCY` attempts in the process, at most `PER_ORGANISATION` of
 *   one organisation and `PER_ENDPOINT` of one endpoint, starting them round-robin over the
 *   organisations; claims take the same shares (`ClaimFairness`), and none for an organisation or
 *   endpoint that has no room here, so one tenant's slow receivers never hold up another's;
 * - a shutdown interrupts attempts in flight: each is recorded as abandoned and due at once (another
 *   process, or this one after its restart, retries it); claimed or held ones not started are
 *   handed back, due as before;
 * - every attempt is counted before it is sent (`claims`: raised by the claim, or written as 1
 *   with a held delivery); a delivery with `MAX_UNFINISHED` attempts that never finished (the
 *   process died or hung in them) is dead-lettered: `failed`, with "dead-lettered after N attempts".
 *
 * The fast path (simulate): when this process runs the worker, `holdUntil` gives the lease that an
 * event's deliveries are written with, in the transaction that queues them, so they are claimed by
 * this process from the start; after the commit, `send` hands them to the worker with the endpoint,
 * event and plan read in that transaction, and the first attempt starts as soon as the scheduler
 * has room, with no claim, no re-read and no wait for a tick. The URL guard still runs right before
 * it. If `send` never runs (a crash after the commit), the lease lapses and any worker claims them;
 * on shutdown, held deliveries not started are handed back like claimed ones.
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
import type { Scope } from "effect"
import { Clock, Context, Duration, Effect, Exit, FiberSet, Layer, Option, Queue, Stream } from "effect"
import { createHmac } from "node:crypto"
import * as Metrics from "../Metrics.js"
import type { Plan } from "../persistence/Accounts.js"
import { Accounts } from "../persistence/Accounts.js"
import type {
  ClaimFairness,
  DeliveryStatus,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEventRow
} from "../persistence/WebhookStore.js"
import { WebhookStore } from "../persistence/WebhookStore.js"
import * as Redact from "../Redact.js"
import * as Tracing from "../Tracing.js"
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

/** Connect, headers and body of one attempt together. @since 0.1.0 @category constants */
export const TIMEOUT = Duration.seconds(10)

/** At most this much of a receiver's answer is read; then the connection is dropped. @since 0.1.0 @category constants */
export const READ_LIMIT = 64 * 1024

/** At most this many bytes (UTF-8) of an attempt's error, with the answer's excerpt, are logged. @since 0.1.0 @category constants */
export const LOG_LIMIT = 1024

/** At most this many bytes (UTF-8) of a receiver's answer are kept as the attempt's preview. @since 0.1.0 @category constants */
export const PREVIEW_LIMIT = 2048

/** How much of an answer is kept to make the preview from (a JSON body is redacted whole when it fits). */
const KEEP_LIMIT = 16 * 1024

/** Attempts in flight in one process, at most. @since 0.1.0 @category constants */
export const CONCURRENCY = 32

/** Attempts of one organisation in flight in one process, at most. @since 0.1.0 @category constants */
export const PER_ORGANISATION = 8

/** Attempts to one endpoint in flight in one process, at most. @since 0.1.0 @category constants */
export const PER_ENDPOINT = 4

/** How long `runDue` waits before looking again when another process's claim held every due row. */
const CONTENDED_RETRY = Duration.millis(10)

/**
 * A delivery with this many started attempts that never finished (the process died or hung in
 * them) is dead-lettered instead of sent again.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_UNFINISHED = 3

/** A claim outlives the timeout, so no other worker retries an attempt still in flight. */
const LEASE = Duration.seconds(60)
const BATCH = 20

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
  /**
   * One attempt of a test event to an endpoint, now (the dashboard's "send test event"): checked,
   * signed, bounded and previewed as every delivery attempt is (the URL guard, the 10 s deadline,
   * the redacted preview), but never queued, retried nor logged as a delivery.
   */
  readonly sendTest: (
    endpoint: WebhookEndpoint,
    plan: Plan,
    event: { readonly id: string; readonly type: string; readonly body: string }
  ) => Effect.Effect<TestAttempt>
  /**
   * Runs `runDue` whenever woken, and at least every `interval`, and sends what `send` hands it;
   * forever. Interrupted (shutdown), it hands back what has not started, gives the attempts in
   * flight up to `grace` (default none) to end, and then abandons them, due again at once.
   */
  readonly loop: (interval: Duration.Duration, grace?: Duration.Duration) => Effect.Effect<never>
}

/**
 * What a test event's one attempt met.
 *
 * @since 0.1.0
 * @category models
 */
export interface TestAttempt {
  readonly status_code: number | null
  /** null when the receiver answered 2xx. */
  readonly error: string | null
  readonly response_preview: string | null
  readonly duration_ms: number
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

/** `text` cut to at most `limit` bytes of UTF-8 (whole characters, then "…"). */
const capBytes = (text: string, limit: number): string => {
  if (Buffer.byteLength(text, "utf8") <= limit) return text
  let out = ""
  let bytes = 0
  for (const ch of text) {
    const size = Buffer.byteLength(ch, "utf8")
    if (bytes + size > limit - 3) break
    out += ch
    bytes += size
  }
  return `${out}…`
}

/**
 * `text` cut to at most `LOG_LIMIT` bytes of UTF-8 (whole characters, then "…").
 *
 * @since 0.1.0
 * @category logging
 */
export const capLog = (text: string): string => capBytes(text, LOG_LIMIT)

/** `"<secret-looking key>": "<value>"` in JSON text that did not parse (cut short, or not quite JSON). */
const sensitivePair = new RegExp(
  `("[^"\\\\]*(?:${Redact.sensitiveName.source})[^"\\\\]*"\\s*:\\s*)("(?:[^"\\\\]|\\\\.)*"|[^,}\\]\\s]+)`,
  "gi"
)

/**
 * A receiver's answer as the attempt keeps it for the dashboard: JSON with every value under a
 * secret-looking key replaced (`Redact.json`; in text that does not parse, such pairs by pattern),
 * every issued token and configured secret redacted by value (`redact`), then cut to
 * `PREVIEW_LIMIT` bytes.
 *
 * @since 0.1.0
 * @category logging
 */
export const previewOf = (body: string, redact: (s: string) => string = Redact.text): string => {
  let redacted: string
  try {
    redacted = JSON.stringify(Redact.json(JSON.parse(body), redact))
  } catch {
    redacted = redact(body.replace(sensitivePair, (_, key: string) => `${key}"${Redact.marker}"`))
  }
  return capBytes(redacted, PREVIEW_LIMIT)
}

/**
 * Reads a receiver's answer up to `READ_LIMIT` bytes (then stops pulling, which drops the stream)
 * and keeps its first `KEEP_LIMIT` bytes as text; a body that fails to arrive reads as empty.
 */
const readCapped = <E>(body: Stream.Stream<Uint8Array, E>): Effect.Effect<string> =>
  body.pipe(
    Stream.runFoldWhile(
      { read: 0, kept: Buffer.alloc(0) },
      (s) => s.read < READ_LIMIT,
      (s, chunk) => ({
        read: s.read + chunk.length,
        kept: s.kept.length >= KEEP_LIMIT
          ? s.kept
          : Buffer.concat([s.kept, chunk.subarray(0, KEEP_LIMIT - s.kept.length)])
      })
    ),
    Effect.map((s) => s.kept.toString("utf8")),
    Effect.orElseSucceed(() => "")
  )

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

interface Attempt {
  readonly started: number
  readonly status_code: number | null
  readonly error: string | null
  /** The answer's preview (`previewOf`); absent when no answer came. */
  readonly preview?: string
  /** No retry: the delivery is `failed` whatever attempt this is. */
  readonly final: boolean
  /** Stopped by a shutdown: due again at once (unless it was the last attempt). */
  readonly abandoned?: boolean
}

/** An attempt waiting for, or holding, a slot of the scheduler. */
interface Job {
  readonly delivery: WebhookDelivery
  readonly run: Effect.Effect<Attempt>
}

/** Runs jobs within the concurrency limits, round-robin over the organisations. */
interface Scheduler {
  readonly submit: (jobs: ReadonlyArray<Job>) => Effect.Effect<void>
  /** Jobs waiting or running. */
  readonly size: () => number
  /** The shares of the next claim: none for the organisations and endpoints with no room. */
  readonly fairness: () => ClaimFairness
  /** Waits until a job ended (or one ended since the last wait). */
  readonly ended: Effect.Effect<void>
}

const bump = (counts: Map<string, number>, key: string, by: number) => {
  const n = (counts.get(key) ?? 0) + by
  if (n <= 0) counts.delete(key)
  else counts.set(key, n)
}

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
    const sandboxClient = HttpClient.withScope(yield* HttpClient.HttpClient)
    const productionClient = Option.match(yield* Effect.serviceOption(ProductionDeliveryClient), {
      onNone: () => sandboxClient,
      onSome: HttpClient.withScope
    })
    const wakeUp = yield* Queue.sliding<void>(1)
    const redact = yield* Redact.fromConfig

    const secretsOf: Service["secretsOf"] = (endpoint, now) => [
      crypto.decrypt(endpoint.secret, endpoint.key_id),
      ...(endpoint.previous_secret !== null && endpoint.previous_key_id !== null &&
          endpoint.previous_expires_at !== null && endpoint.previous_expires_at > now
        ? [crypto.decrypt(endpoint.previous_secret, endpoint.previous_key_id)]
        : [])
    ]

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

    /**
     * Checks the address, signs and POSTs, all within the 10 s deadline: what happened, never a
     * failure. Interruptible throughout: the deadline (or a shutdown) aborts the request and drops
     * the answer's stream.
     */
    const post = (
      started: number,
      endpoint: WebhookEndpoint,
      event: WebhookEventRow,
      plan: Plan
    ): Effect.Effect<Attempt> =>
      Effect.gen(function*() {
        // the attempt's span links to what caused the event (the request or poll that queued it)
        yield* Tracing.linkTo(event.trace_parent, "cause")
        const refused = yield* Effect.flip(guard.check(endpoint.url, plan)).pipe(Effect.option)
        if (Option.isSome(refused)) {
          return { started, status_code: null, error: capLog(`refused: ${refused.value}`), final: false }
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
          Effect.flatMap((response) =>
            Effect.map(readCapped(response.stream), (excerpt) => ({ status: response.status, excerpt }))
          ),
          Effect.scoped,
          Effect.match({
            onFailure: (e) => ({
              started,
              status_code: null,
              error: capLog(`request failed: ${e.reason}`),
              final: false
            }),
            onSuccess: ({ excerpt, status }) => {
              // the log's excerpt is the preview's start: redacted the same way
              const preview = previewOf(excerpt, redact)
              return {
                started,
                status_code: status,
                error: status >= 200 && status < 300
                  ? null
                  : capLog(preview.trim() === "" ? `answered ${status}` : `answered ${status}: ${preview}`),
                preview,
                final: false
              }
            }
          })
        )
      }).pipe(
        // The address check (a DNS answer for a name), connect, headers and body: one deadline.
        Effect.timeoutTo({
          duration: TIMEOUT,
          onSuccess: (attempt): Attempt => attempt,
          onTimeout: (): Attempt => ({ started, status_code: null, error: "timed out after 10 s", final: false })
        })
      )

    /** Logs attempt `attempts + 1` of a delivery and moves it on. */
    const record = (delivery: WebhookDelivery, result: Attempt) =>
      Effect.gen(function*() {
        const ended = yield* Clock.currentTimeMillis
        const n = delivery.attempts + 1
        const ok = result.error === null
        const retry = nextAttemptAt(n, ended)
        const next: { readonly status: DeliveryStatus; readonly next_attempt_at: number | null } = ok
          ? { status: "succeeded", next_attempt_at: null }
          : result.final || retry === undefined
          ? { status: "failed", next_attempt_at: null }
          : { status: "pending", next_attempt_at: result.abandoned === true ? ended : retry }
        Metrics.recordWebhookAttempt(
          ok ? "succeeded" : next.status === "failed" ? "failed" : result.abandoned === true ? "abandoned" : "retrying",
          Math.max(0, ended - result.started) / 1000
        )
        yield* webhookStore.recordWebhookAttempt(
          {
            delivery_id: delivery.id,
            n,
            at: result.started,
            status_code: result.status_code,
            error: result.error,
            duration_ms: Math.max(0, ended - result.started),
            response_preview: result.preview ?? null
          },
          next
        )
      })

    /** Whether a claim's lease still covers a whole attempt started at `now`. */
    const leaseCovers = (delivery: WebhookDelivery, now: number) =>
      delivery.locked_until !== null && delivery.locked_until - now > Duration.toMillis(TIMEOUT)

    /**
     * One job, in its slot. A claim whose lease no longer covers an attempt (it waited behind slow
     * receivers) is given back uncounted and left to lapse, so it is never sent by this process and
     * by another's claim at once. A delivery with too many unfinished attempts is dead-lettered.
     * Otherwise the attempt runs interruptibly; its result, or its abandonment when interrupted, is
     * recorded uninterruptibly.
     */
    const runJob = (job: Job): Effect.Effect<void> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const { delivery } = job
          const now = yield* Clock.currentTimeMillis
          if (!leaseCovers(delivery, now)) {
            yield* webhookStore.releaseWebhookClaim(delivery, undefined)
            return
          }
          const unfinished = delivery.claims - 1 - delivery.attempts
          if (unfinished >= MAX_UNFINISHED) {
            yield* Effect.logWarning("webhook delivery dead-lettered", delivery.id)
            return yield* record(delivery, {
              started: now,
              status_code: null,
              error: `dead-lettered after ${delivery.claims - 1} attempts: ${unfinished} never finished ` +
                "(the process stopped or hung during them)",
              final: true
            })
          }
          const exit = yield* Effect.exit(restore(job.run))
          if (Exit.isSuccess(exit)) return yield* record(delivery, exit.value)
          if (Exit.isInterrupted(exit)) {
            return yield* record(delivery, {
              started: now,
              status_code: null,
              error: "abandoned: the worker stopped during the attempt (shutdown); due again at once",
              final: false,
              abandoned: true
            })
          }
          yield* Effect.logError("webhook delivery crashed", delivery.id, exit.cause)
        })
      ).pipe(
        Effect.catchAllDefect((defect) => Effect.logError("webhook delivery crashed", job.delivery.id, defect)),
        Effect.withSpan("WebhookDispatcher.deliver", {
          captureStackTrace: false,
          attributes: { delivery: job.delivery.id }
        })
      )

    /** Hands a claim or hold back to the queue, due as it was; nothing if it is no longer ours. */
    const handBack = (delivery: WebhookDelivery, now: number) =>
      Effect.asVoid(webhookStore.releaseWebhookClaim(delivery, delivery.next_attempt_at ?? now))

    /**
     * A scheduler for the scope: closing it hands back the jobs waiting, gives the ones running up
     * to `grace` to end, then interrupts them (each records itself abandoned). `onEnd` runs after
     * every job.
     */
    const makeScheduler = (
      onEnd: Effect.Effect<void>,
      grace: Duration.Duration = Duration.zero
    ): Effect.Effect<Scheduler, never, Scope.Scope> =>
      Effect.gen(function*() {
        const inFlight = yield* FiberSet.make<void>()
        const endedSignal = yield* Queue.sliding<void>(1)
        const waiting = new Map<string, Array<Job>>()
        const runningOrganisations = new Map<string, number>()
        const runningEndpoints = new Map<string, number>()
        let running = 0
        let waitingCount = 0
        let closing = false

        /** The jobs to start now: one per organisation per round, the rounds until nothing fits. */
        const pick = (): Array<Job> => {
          const picked: Array<Job> = []
          while (!closing && running < CONCURRENCY) {
            let started = false
            for (const organisation of [...waiting.keys()]) {
              if (running >= CONCURRENCY) break
              if ((runningOrganisations.get(organisation) ?? 0) >= PER_ORGANISATION) continue
              const jobs = waiting.get(organisation)!
              const i = jobs.findIndex((j) => (runningEndpoints.get(j.delivery.endpoint_id) ?? 0) < PER_ENDPOINT)
              if (i < 0) continue
              const job = jobs.splice(i, 1)[0]!
              // to the back of the round
              waiting.delete(organisation)
              if (jobs.length > 0) waiting.set(organisation, jobs)
              waitingCount--
              running++
              bump(runningOrganisations, organisation, 1)
              bump(runningEndpoints, job.delivery.endpoint_id, 1)
              picked.push(job)
              started = true
            }
            if (!started) break
          }
          return picked
        }

        const pump: Effect.Effect<void> = Effect.suspend(() =>
          Effect.forEach(pick(), (job) =>
            FiberSet.run(
              inFlight,
              Effect.ensuring(
                runJob(job),
                Effect.suspend(() => {
                  running--
                  bump(runningOrganisations, job.delivery.organisation_id, -1)
                  bump(runningEndpoints, job.delivery.endpoint_id, -1)
                  return Effect.zipRight(Queue.offer(endedSignal, undefined), Effect.zipRight(onEnd, pump))
                })
              )
            ), { discard: true })
        )

        // Runs before the fiber set's own finalizer (which interrupts what runs).
        yield* Effect.addFinalizer(() =>
          Effect.gen(function*() {
            closing = true
            const now = yield* Clock.currentTimeMillis
            const left = [...waiting.values()].flat()
            waiting.clear()
            waitingCount = 0
            yield* Effect.forEach(left, (job) => handBack(job.delivery, now), { discard: true })
            if (Duration.greaterThan(grace, Duration.zero)) {
              // (a finalizer is uninterruptible: the wait itself must be, for the timeout to end it)
              yield* Effect.ignore(Effect.timeout(Effect.interruptible(FiberSet.awaitEmpty(inFlight)), grace))
            }
          })
        )

        const load = () => {
          const organisations = new Map(runningOrganisations)
          const endpoints = new Map(runningEndpoints)
          for (const [organisation, jobs] of waiting) {
            bump(organisations, organisation, jobs.length)
            for (const job of jobs) bump(endpoints, job.delivery.endpoint_id, 1)
          }
          return { organisations, endpoints }
        }

        return {
          submit: (jobs) =>
            Effect.suspend(() => {
              if (closing) {
                return Effect.flatMap(
                  Clock.currentTimeMillis,
                  (now) => Effect.forEach(jobs, (job) => handBack(job.delivery, now), { discard: true })
                )
              }
              for (const job of jobs) {
                const organisation = job.delivery.organisation_id
                const queue = waiting.get(organisation)
                if (queue === undefined) waiting.set(organisation, [job])
                else queue.push(job)
                waitingCount++
              }
              return pump
            }),
          size: () => running + waitingCount,
          fairness: () => {
            const { endpoints, organisations } = load()
            return {
              perOrganisation: PER_ORGANISATION,
              perEndpoint: PER_ENDPOINT,
              excludeOrganisations: [...organisations].filter(([, n]) => n >= PER_ORGANISATION).map(([k]) => k),
              excludeEndpoints: [...endpoints].filter(([, n]) => n >= PER_ENDPOINT).map(([k]) => k)
            }
          },
          ended: Queue.take(endedSignal)
        } satisfies Scheduler
      })

    /**
     * Claims what the scheduler has room for, in fair shares, and submits it: how many were
     * claimed, and whether more may be due (the claim was full, or some were left out for room).
     */
    const claimInto = (scheduler: Scheduler) =>
      Effect.gen(function*() {
        const room = Math.min(BATCH, CONCURRENCY - scheduler.size())
        if (room <= 0) return { claimed: 0, more: true }
        const now = yield* Clock.currentTimeMillis
        const fairness = scheduler.fairness()
        const claimed = yield* webhookStore.claimWebhookDeliveries(now, now + Duration.toMillis(LEASE), room, fairness)
        yield* scheduler.submit(claimed.map((delivery) => ({ delivery, run: attempt(delivery) })))
        return {
          claimed: claimed.length,
          more: claimed.length === room || fairness.excludeOrganisations.length > 0 ||
            fairness.excludeEndpoints.length > 0
        }
      })

    const runDue: Effect.Effect<number> = Effect.gen(function*() {
      const scheduler = yield* makeScheduler(Effect.void)
      let total = 0
      while (true) {
        const { claimed } = yield* claimInto(scheduler)
        total += claimed
        if (claimed === 0) {
          if (scheduler.size() > 0) {
            yield* scheduler.ended
            continue
          }
          // Nothing came back and nothing runs: done, unless a delivery is due that another
          // process was claiming at that moment (skipped, not leased). Look again once its claim
          // has committed: it either took the delivery (leased) or let it go.
          if (!(yield* webhookStore.anyDueWebhookDelivery(yield* Clock.currentTimeMillis))) return total
          yield* Effect.sleep(CONTENDED_RETRY)
        }
      }
    }).pipe(Effect.scoped)

    // Held deliveries waiting for the worker, and whether a worker loop runs to take them.
    const handed = yield* Queue.unbounded<Held>()
    let accepting = false

    const service: Service = {
      runDue,
      wake: Effect.asVoid(Queue.offer(wakeUp, undefined)),
      secretsOf,
      sendTest: (endpoint, plan, event) =>
        Effect.gen(function*() {
          const started = yield* Clock.currentTimeMillis
          const result = yield* post(started, endpoint, {
            id: event.id,
            organisation_id: endpoint.organisation_id,
            connection_id: "",
            type: event.type,
            body: event.body,
            created_at: started,
            trace_parent: null
          }, plan)
          const ended = yield* Clock.currentTimeMillis
          return {
            status_code: result.status_code,
            error: result.error,
            response_preview: result.preview ?? null,
            duration_ms: Math.max(0, ended - started)
          }
        }).pipe(
          Effect.withSpan("WebhookDispatcher.sendTest", {
            captureStackTrace: false,
            attributes: { endpoint: endpoint.id }
          })
        ),
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
            (now) => Effect.forEach(held, (h) => handBack(h.delivery, now), { discard: true })
          )
        }),
      loop: (interval, grace) =>
        Effect.gen(function*() {
          let more = false
          const scheduler = yield* makeScheduler(
            Effect.suspend(() => more ? Queue.offer(wakeUp, undefined) : Effect.void),
            grace
          )
          // Runs first on the way out: what was handed over and not yet submitted goes back.
          yield* Effect.addFinalizer(() =>
            Effect.gen(function*() {
              accepting = false
              const now = yield* Clock.currentTimeMillis
              const left = yield* Queue.takeAll(handed)
              yield* Effect.forEach(left, (held) => handBack(held.delivery, now), { discard: true })
            })
          )
          accepting = true
          yield* Effect.forkScoped(Effect.forever(
            Effect.flatMap(
              Effect.zipWith(Queue.take(handed), Queue.takeAll(handed), (first, rest) => [first, ...rest]),
              (held) => scheduler.submit(held.map((h) => ({ delivery: h.delivery, run: attemptHeld(h) })))
            )
          ))
          return yield* Effect.forever(
            Effect.zipRight(
              Effect.catchAllCause(
                Effect.gen(function*() {
                  // claim while claims come back full and there is room
                  while (true) {
                    const claim = yield* claimInto(scheduler)
                    more = claim.more
                    if (claim.claimed === 0 || scheduler.size() >= CONCURRENCY) return
                  }
                }),
                (cause) => Effect.logError("webhook worker", cause)
              ),
              Effect.race(Effect.sleep(interval), Queue.take(wakeUp))
            )
          )
        }).pipe(
          Effect.scoped,
          Effect.ensuring(Effect.sync(() => {
            accepting = false
          }))
        )
    }
    return service
  })
)
