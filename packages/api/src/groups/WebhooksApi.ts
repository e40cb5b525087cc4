/**
 * Webhook subscriptions (DECISIONS "Webhooks"): create (the `whsec_…` secret is shown in this
 * answer only), list, get, update, delete, rotate the secret, the delivery log with its attempts,
 * and redelivery of one delivery.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Envelope, Page, WebhookEvent } from "@tracebridge/core"
import { Schema } from "effect"
import { errors } from "../OpenApiErrors.js"
import { Authentication } from "../Security.js"
import { strict } from "./Schemas.js"

const Url = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2048)).annotations({
  description: "The receiver. Production: https, never a private, loopback or link-local address"
})
const Events = Schema.Array(WebhookEvent.EventType).pipe(Schema.minItems(1)).annotations({
  description: "The event names to receive"
})
const Description = Schema.String.pipe(Schema.maxLength(500))
const WebhookPath = Schema.Struct({ webhook_id: Schema.String })
const DeliveryPath = Schema.Struct({ webhook_id: Schema.String, delivery_id: Schema.String })

/** @since 0.1.0 @category schemas */
export const WebhookCreate = Schema.Struct({
  url: Url,
  events: Events,
  description: Schema.optional(Schema.NullOr(Description))
}).annotations({ identifier: "WebhookCreate", parseOptions: strict })

/** @since 0.1.0 @category schemas */
export const WebhookUpdate = Schema.Struct({
  url: Schema.optional(Url),
  events: Schema.optional(Events),
  description: Schema.optional(Schema.NullOr(Description)),
  status: Schema.optional(Schema.Literal("enabled", "disabled"))
}).annotations({ identifier: "WebhookUpdate", parseOptions: strict })

const webhookFields = {
  id: Schema.String,
  url: Schema.String,
  events: Schema.Array(WebhookEvent.EventType),
  description: Schema.NullOr(Schema.String),
  status: Schema.Literal("enabled", "disabled"),
  created_at: Schema.String
}

/** @since 0.1.0 @category schemas */
export const Webhook = Schema.Struct(webhookFields).annotations({ identifier: "Webhook" })

/** @since 0.1.0 @category schemas */
export const WebhookWithSecret = Schema.Struct({
  ...webhookFields,
  secret: Schema.String.annotations({ description: "whsec_…; shown in this answer only" })
}).annotations({ identifier: "WebhookWithSecret" })

/** @since 0.1.0 @category schemas */
export const WebhookDeleted = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotations({
  identifier: "WebhookDeleted"
})

/** @since 0.1.0 @category schemas */
export const DeliveryAttempt = Schema.Struct({
  attempt: Schema.Int,
  at: Schema.String,
  status_code: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  duration_ms: Schema.Int
}).annotations({ identifier: "WebhookDeliveryAttempt" })

/** @since 0.1.0 @category schemas */
export const Delivery = Schema.Struct({
  id: Schema.String,
  webhook_id: Schema.String,
  event_id: Schema.String,
  event_type: WebhookEvent.EventType,
  status: Schema.Literal("pending", "succeeded", "failed"),
  next_attempt_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  attempts: Schema.Array(DeliveryAttempt)
}).annotations({ identifier: "WebhookDelivery" })

/**
 * @since 0.1.0
 * @category groups
 */
export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .annotate(OpenApi.Title, "Webhooks")
  .annotate(
    OpenApi.Description,
    "Endpoints that receive signed events (transfers, lab results), their secrets and their deliveries."
  )
  .add(
    HttpApiEndpoint.post("createWebhook", "/v1/webhooks")
      .annotate(OpenApi.Transform, errors("body", "idempotent", "organisation"))
      .annotate(OpenApi.Summary, "Create a webhook endpoint")
      .annotate(
        OpenApi.Description,
        "Subscribes a URL to events. The signing secret (`whsec_…`) is in this answer only."
      )
      .setPayload(WebhookCreate)
      .addSuccess(Envelope.Envelope(WebhookWithSecret), { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("listWebhooks", "/v1/webhooks")
      .annotate(OpenApi.Transform, errors("params", "organisation"))
      .annotate(OpenApi.Summary, "List webhook endpoints")
      .annotate(OpenApi.Description, "The organisation's endpoints, oldest first, without their secrets.")
      .setUrlParams(Page.PageRequest)
      .addSuccess(Envelope.Paginated(Webhook))
  )
  .add(
    HttpApiEndpoint.get("getWebhook", "/v1/webhooks/:webhook_id")
      .annotate(OpenApi.Transform, errors("owned"))
      .annotate(OpenApi.Summary, "Get a webhook endpoint")
      .annotate(OpenApi.Description, "One endpoint, without its secret.").setPath(WebhookPath).addSuccess(
        Envelope.Envelope(Webhook)
      )
  )
  .add(
    HttpApiEndpoint.patch("updateWebhook", "/v1/webhooks/:webhook_id")
      .annotate(OpenApi.Transform, errors("body", "owned"))
      .annotate(OpenApi.Summary, "Update a webhook endpoint")
      .annotate(OpenApi.Description, "Changes the URL, the events, the description or the status.")
      .setPath(WebhookPath)
      .setPayload(WebhookUpdate)
      .addSuccess(Envelope.Envelope(Webhook))
  )
  .add(
    HttpApiEndpoint.del("deleteWebhook", "/v1/webhooks/:webhook_id")
      .annotate(OpenApi.Transform, errors("owned"))
      .annotate(OpenApi.Summary, "Delete a webhook endpoint")
      .annotate(OpenApi.Description, "Deletes the endpoint with its deliveries.").setPath(WebhookPath).addSuccess(
        Envelope.Envelope(WebhookDeleted)
      )
  )
  .add(
    HttpApiEndpoint.post("rotateWebhookSecret", "/v1/webhooks/:webhook_id/rotate_secret")
      .annotate(OpenApi.Transform, errors("idempotent", "owned"))
      .annotate(OpenApi.Summary, "Rotate a webhook endpoint's secret")
      .annotate(
        OpenApi.Description,
        "Issues a new signing secret; the old one keeps signing alongside it for the grace period."
      )
      .setPath(WebhookPath)
      .addSuccess(Envelope.Envelope(WebhookWithSecret))
  )
  .add(
    HttpApiEndpoint.get("listWebhookDeliveries", "/v1/webhooks/:webhook_id/deliveries")
      .annotate(OpenApi.Transform, errors("params", "owned"))
      .annotate(OpenApi.Summary, "List an endpoint's deliveries")
      .annotate(OpenApi.Description, "Every delivery of the endpoint, newest first, with its attempts.")
      .setPath(WebhookPath)
      .setUrlParams(Page.PageRequest)
      .addSuccess(Envelope.Paginated(Delivery))
  )
  .add(
    HttpApiEndpoint.post("retryWebhookDelivery", "/v1/webhooks/:webhook_id/deliveries/:delivery_id/retry")
      .annotate(OpenApi.Transform, errors("idempotent", "owned"))
      .annotate(OpenApi.Summary, "Redeliver an event")
      .annotate(OpenApi.Description, "Makes the delivery due now again, whatever its status.")
      .setPath(DeliveryPath)
      .addSuccess(Envelope.Envelope(Delivery))
  )
  .middleware(Authentication)
{}
