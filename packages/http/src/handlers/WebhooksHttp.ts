/**
 * @since 0.1.0
 */
import { HttpApiBuilder } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { CurrentPrincipal } from "@tracebridge/api/Security"
import { Effect } from "effect"
import { Webhooks } from "../services/Webhooks.js"
import * as Envelope from "./envelope.js"

/**
 * @since 0.1.0
 * @category layers
 */
export const HttpWebhooksLive = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  handlers
    .handle("createWebhook", ({ payload }) =>
      Effect.gen(function*() {
        const webhooks = yield* Webhooks
        return yield* Envelope.one(yield* webhooks.create(yield* CurrentPrincipal, payload))
      }))
    .handle("listWebhooks", ({ urlParams }) =>
      Effect.gen(function*() {
        const webhooks = yield* Webhooks
        return yield* Envelope.page(yield* webhooks.list(yield* CurrentPrincipal, urlParams))
      }))
    .handle("getWebhook", ({ path }) =>
      Effect.gen(function*() {
        const webhooks = yield* Webhooks
        return yield* Envelope.one(yield* webhooks.get(yield* CurrentPrincipal, path.webhook_id))
      }))
    .handle("updateWebhook", ({ path, payload }) =>
      Effect.gen(function*() {
        const webhooks = yield* Webhooks
        return yield* Envelope.one(yield* webhooks.update(yield* CurrentPrincipal, path.webhook_id, payload))
      }))
    .handle("deleteWebhook", ({ path }) =>
      Effect.gen(function*() {
        const webhooks = yield* Webhooks
        yield* webhooks.remove(yield* CurrentPrincipal, path.webhook_id)
        return yield* Envelope.one({ id: path.webhook_id, deleted: true as const })
      }))
    .handle("rotateWebhookSecret", ({ path }) =>
      Effect.gen(function*() {
        const webhooks = yield* Webhooks
        return yield* Envelope.one(yield* webhooks.rotate(yield* CurrentPrincipal, path.webhook_id))
      }))
    .handle("listWebhookDeliveries", ({ path, urlParams }) =>
      Effect.gen(function*() {
        const webhooks = yield* Webhooks
        return yield* Envelope.page(yield* webhooks.deliveries(yield* CurrentPrincipal, path.webhook_id, urlParams))
      }))
    .handle("retryWebhookDelivery", ({ path }) =>
      Effect.gen(function*() {
        const webhooks = yield* Webhooks
        return yield* Envelope.one(
          yield* webhooks.retry(yield* CurrentPrincipal, path.webhook_id, path.delivery_id)
        )
      })))
