/**
 * Webhook subscriptions and the outbox. A subscription's signing secret (`whsec_…`) is shown once,
 * stored encrypted (it must be recoverable to sign), and never logged; a rotation keeps the old
 * secret signing for 24 h beside the new one. `enqueue` records an event with one delivery per
 * enabled subscription that asked for its type, in the caller's transaction; `enqueueAndSend` does
 * the same and, when this process runs the worker, queues them already held by it, for `send` to
 * hand over after the commit (`WebhookDispatcher`).
 *
 * @since 0.1.0
 */
import type { WebhookEvent } from "@tracebridge/core"
import { Page } from "@tracebridge/core"
import { Clock, Context, Duration, Effect, Either, Layer, Option } from "effect"
import * as Errors from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import { Accounts } from "../persistence/Accounts.js"
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEventRow } from "../persistence/WebhookStore.js"
import { WebhookStore } from "../persistence/WebhookStore.js"
import * as Tracing from "../Tracing.js"
import type { Principal } from "./Auth.js"
import * as Auth from "./Auth.js"
import * as Crypto from "./Crypto.js"
import { UrlGuard } from "./UrlGuard.js"
import { ROTATION_OVERLAP, WebhookDispatcher } from "./WebhookDispatcher.js"

/** @since 0.1.0 @category models */
export interface WebhookView {
  readonly id: string
  readonly url: string
  readonly events: ReadonlyArray<WebhookEvent.EventType>
  readonly description: string | null
  readonly status: "enabled" | "disabled"
  readonly created_at: string
}

/** @since 0.1.0 @category models */
export interface DeliveryView {
  readonly id: string
  readonly webhook_id: string
  readonly event_id: string
  readonly event_type: WebhookEvent.EventType
  readonly status: "pending" | "succeeded" | "failed"
  readonly next_attempt_at: string | null
  readonly created_at: string
  readonly attempts: ReadonlyArray<{
    readonly attempt: number
    readonly at: string
    readonly status_code: number | null
    readonly error: string | null
    readonly duration_ms: number
  }>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly create: (
    principal: Principal,
    body: {
      readonly url: string
      readonly events: ReadonlyArray<WebhookEvent.EventType>
      readonly description?: string | null | undefined
    }
  ) => Effect.Effect<WebhookView & { readonly secret: string }, Errors.HttpError>
  readonly list: (
    principal: Principal,
    page: Page.PageRequest
  ) => Effect.Effect<Page.Page<WebhookView>, Errors.HttpError>
  readonly get: (principal: Principal, id: string) => Effect.Effect<WebhookView, Errors.HttpError>
  readonly update: (
    principal: Principal,
    id: string,
    patch: {
      readonly url?: string | undefined
      readonly events?: ReadonlyArray<WebhookEvent.EventType> | undefined
      readonly description?: string | null | undefined
      readonly status?: "enabled" | "disabled" | undefined
    }
  ) => Effect.Effect<WebhookView, Errors.HttpError>
  readonly remove: (principal: Principal, id: string) => Effect.Effect<void, Errors.HttpError>
  readonly rotate: (
    principal: Principal,
    id: string
  ) => Effect.Effect<WebhookView & { readonly secret: string }, Errors.HttpError>
  readonly deliveries: (
    principal: Principal,
    id: string,
    page: Page.PageRequest
  ) => Effect.Effect<Page.Page<DeliveryView>, Errors.HttpError>
  readonly retry: (
    principal: Principal,
    id: string,
    deliveryId: string
  ) => Effect.Effect<DeliveryView, Errors.HttpError>
  /**
   * Records an event and a delivery for every enabled subscription of the organisation that asked
   * for its type; the number of deliveries. Run it in the transaction of the change that caused it.
   */
  readonly enqueue: (
    organisationId: string,
    connectionId: string,
    event: WebhookEvent.WebhookEvent
  ) => Effect.Effect<number>
  /**
   * `enqueue`, for a caller that commits at once and then runs `send` (simulate). When this process
   * runs the worker, the deliveries are written already claimed by it (the lease a claim would
   * write), and `send` hands them to the worker with the endpoints, the event and the plan read
   * here, so the first attempt needs no claim and no re-read. Otherwise (no worker here) `send`
   * wakes the worker. If `send` never runs (a crash after the commit), the lease lapses and any
   * worker claims them.
   */
  readonly enqueueAndSend: (
    organisationId: string,
    connectionId: string,
    event: WebhookEvent.WebhookEvent
  ) => Effect.Effect<{ readonly deliveries: number; readonly send: Effect.Effect<void> }>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Webhooks extends Context.Tag("Webhooks/Webhooks")<Webhooks, Service>() {}

const iso = (ms: number) => new Date(ms).toISOString()

const view = (e: WebhookEndpoint): WebhookView => ({
  id: e.id,
  url: e.url,
  events: JSON.parse(e.events),
  description: e.description,
  status: e.status,
  created_at: iso(e.created_at)
})

const deliveryView = (d: WebhookDelivery, attempts: ReadonlyArray<WebhookAttempt>): DeliveryView => ({
  id: d.id,
  webhook_id: d.endpoint_id,
  event_id: d.event_id,
  event_type: d.event_type,
  status: d.status,
  next_attempt_at: d.next_attempt_at === null ? null : iso(d.next_attempt_at),
  created_at: iso(d.created_at),
  attempts: attempts.filter((a) => a.delivery_id === d.id).map((a) => ({
    attempt: a.n,
    at: iso(a.at),
    status_code: a.status_code,
    error: a.error,
    duration_ms: a.duration_ms
  }))
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(
  Webhooks,
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const webhookStore = yield* WebhookStore
    const crypto = yield* Crypto.Crypto
    const guard = yield* UrlGuard
    const dispatcher = yield* WebhookDispatcher

    /** Organisation tokens only: a connection token may not manage the organisation's webhooks. */
    // Both end the request's authorisation: an Idempotency-Key is looked at only after them.
    const organisationOnly = (principal: Principal) =>
      Effect.zipRight(Auth.organisationOnly(principal, "Webhooks"), Idempotency.authorised)

    const owned = (principal: Principal, id: string) =>
      Effect.gen(function*() {
        yield* Auth.organisationOnly(principal, "Webhooks")
        const endpoint = yield* webhookStore.getWebhookEndpoint(id)
        if (Option.isNone(endpoint) || endpoint.value.organisation_id !== principal.organisation.id) {
          return yield* Errors.fail("not_found_error", "resource_not_found", `No webhook with id ${id}`)
        }
        yield* Idempotency.authorised
        return endpoint.value
      })

    const checkUrl = (principal: Principal, url: string) =>
      Effect.gen(function*() {
        const plan = principal.organisation.plan
        const syntax = guard.checkSyntax(url, plan)
        if (Either.isLeft(syntax)) {
          return yield* Errors.fail("validation_error", "invalid_parameter", syntax.left, "url")
        }
        // A name that does not resolve yet is accepted: every attempt checks the address again.
        const refused = yield* Effect.flip(guard.check(url, plan)).pipe(Effect.option)
        if (Option.isSome(refused) && !refused.value.endsWith("does not resolve")) {
          return yield* Errors.fail("validation_error", "invalid_parameter", refused.value, "url")
        }
      })

    const unique = <A>(xs: ReadonlyArray<A>) => [...new Set(xs)]

    /** Writes the event and one delivery per matching enabled endpoint (in that order), leased until `lockedUntil`. */
    const queue = (
      organisationId: string,
      connectionId: string,
      event: WebhookEvent.WebhookEvent,
      lockedUntil: number | null
    ) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const endpoints = (yield* webhookStore.listWebhookEndpoints(organisationId)).filter((e) =>
          e.status === "enabled" && (JSON.parse(e.events) as ReadonlyArray<string>).includes(event.type)
        )
        const deliveries: ReadonlyArray<WebhookDelivery> = endpoints.map((e) => ({
          id: Crypto.id("whd_"),
          organisation_id: organisationId,
          endpoint_id: e.id,
          event_id: event.id,
          event_type: event.type,
          status: "pending",
          attempts: 0,
          // held by this process's worker: its first attempt is counted now, before it is sent
          claims: lockedUntil === null ? 0 : 1,
          next_attempt_at: now,
          locked_until: lockedUntil,
          created_at: now,
          updated_at: now
        }))
        const row: WebhookEventRow = {
          id: event.id,
          organisation_id: organisationId,
          connection_id: connectionId,
          type: event.type,
          body: JSON.stringify(event),
          created_at: now,
          trace_parent: Option.getOrNull(yield* Tracing.currentTraceparent)
        }
        yield* webhookStore.insertWebhookEvent(row, deliveries)
        return { event: row, endpoints, deliveries }
      })

    const service: Service = {
      create: (principal, body) =>
        Effect.gen(function*() {
          yield* organisationOnly(principal)
          yield* checkUrl(principal, body.url)
          const now = yield* Clock.currentTimeMillis
          const secret = Crypto.token("whsec_")
          const sealed = crypto.encrypt(secret)
          const endpoint: WebhookEndpoint = {
            id: Crypto.id("wh_"),
            organisation_id: principal.organisation.id,
            url: body.url,
            events: JSON.stringify(unique(body.events)),
            description: body.description ?? null,
            status: "enabled",
            secret: sealed.ciphertext,
            key_id: sealed.keyId,
            previous_secret: null,
            previous_key_id: null,
            previous_expires_at: null,
            created_at: now,
            updated_at: now
          }
          yield* webhookStore.insertWebhookEndpoint(endpoint)
          return { ...view(endpoint), secret }
        }),
      list: (principal, page) =>
        Effect.gen(function*() {
          yield* organisationOnly(principal)
          const all = yield* webhookStore.listWebhookEndpoints(principal.organisation.id)
          return Page.paginate(all.map(view), page)
        }),
      get: (principal, id) => Effect.map(owned(principal, id), view),
      update: (principal, id, patch) =>
        Effect.gen(function*() {
          const endpoint = yield* owned(principal, id)
          if (patch.url !== undefined) yield* checkUrl(principal, patch.url)
          const now = yield* Clock.currentTimeMillis
          const changes = {
            ...(patch.url === undefined ? {} : { url: patch.url }),
            ...(patch.events === undefined ? {} : { events: JSON.stringify(unique(patch.events)) }),
            ...(patch.description === undefined ? {} : { description: patch.description }),
            ...(patch.status === undefined ? {} : { status: patch.status }),
            updated_at: now
          }
          yield* webhookStore.updateWebhookEndpoint(id, changes)
          return view({ ...endpoint, ...changes })
        }),
      remove: (principal, id) => Effect.flatMap(owned(principal, id), () => webhookStore.deleteWebhookEndpoint(id)),
      rotate: (principal, id) =>
        Effect.gen(function*() {
          const endpoint = yield* owned(principal, id)
          const now = yield* Clock.currentTimeMillis
          const secret = Crypto.token("whsec_")
          const sealed = crypto.encrypt(secret)
          const changes = {
            secret: sealed.ciphertext,
            key_id: sealed.keyId,
            previous_secret: endpoint.secret,
            previous_key_id: endpoint.key_id,
            previous_expires_at: now + Duration.toMillis(ROTATION_OVERLAP),
            updated_at: now
          }
          yield* webhookStore.updateWebhookEndpoint(id, changes)
          return { ...view({ ...endpoint, ...changes }), secret }
        }),
      deliveries: (principal, id, page) =>
        Effect.gen(function*() {
          yield* owned(principal, id)
          const window = Page.toWindow(page)
          const { items, total } = yield* webhookStore.listWebhookDeliveries(id, window.offset, window.limit)
          const attempts = yield* webhookStore.listWebhookAttempts(items.map((d) => d.id))
          return Page.fromSlice(page, { items: items.map((d) => deliveryView(d, attempts)), total })
        }),
      retry: (principal, id, deliveryId) =>
        Effect.gen(function*() {
          yield* owned(principal, id)
          const delivery = yield* webhookStore.getWebhookDelivery(deliveryId)
          if (Option.isNone(delivery) || delivery.value.endpoint_id !== id) {
            return yield* Errors.fail("not_found_error", "resource_not_found", `No delivery with id ${deliveryId}`)
          }
          const now = yield* Clock.currentTimeMillis
          yield* webhookStore.retryWebhookDelivery(deliveryId, now)
          yield* dispatcher.wake
          const updated = yield* webhookStore.getWebhookDelivery(deliveryId)
          const attempts = yield* webhookStore.listWebhookAttempts([deliveryId])
          return deliveryView(Option.getOrElse(updated, () => delivery.value), attempts)
        }),
      enqueue: (organisationId, connectionId, event) =>
        Effect.map(queue(organisationId, connectionId, event, null), (queued) => queued.deliveries.length),
      enqueueAndSend: (organisationId, connectionId, event) =>
        Effect.gen(function*() {
          const holdUntil = yield* dispatcher.holdUntil
          const queued = yield* queue(organisationId, connectionId, event, holdUntil ?? null)
          const count = queued.deliveries.length
          if (count === 0) return { deliveries: 0, send: Effect.void }
          if (holdUntil === undefined) return { deliveries: count, send: dispatcher.wake }
          const organisation = yield* accounts.getOrganisation(organisationId)
          const plan = Option.match(organisation, { onNone: () => "production" as const, onSome: (o) => o.plan })
          const held = queued.deliveries.map((delivery, i) => ({
            delivery,
            endpoint: queued.endpoints[i]!,
            event: queued.event,
            plan
          }))
          return { deliveries: count, send: dispatcher.send(held) }
        })
    }
    return service
  })
)
