/**
 * The events (DECISIONS "Events", issue #34): every event the organisation's webhooks were sent,
 * newest first, with where its deliveries stand. An event's `data` is the delivered body's `data`,
 * as it was sent. Events are kept 30 days (`TRACEBRIDGE_EVENT_RETENTION_DAYS`).
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Envelope, Page, Schemas, WebhookEvent } from "@tracebridge/core"
import { Schema } from "effect"
import { errors } from "../OpenApiErrors.js"
import { Authentication } from "../Security.js"

/** @since 0.1.0 @category schemas */
export const EndpointDelivery = Schema.Struct({
  webhook_id: Schema.String,
  status: Schema.Literal("pending", "succeeded", "failed"),
  attempts: Schema.Int.annotations({ description: "Attempts made so far" })
}).annotations({ identifier: "EventEndpointDelivery" })

/** @since 0.1.0 @category schemas */
export const DeliverySummary = Schema.Struct({
  status: Schema.Literal("delivered", "pending", "failed").annotations({
    description: "`failed` when a delivery failed for good, else `pending` while one is still being tried, else " +
      "`delivered` (also when no endpoint was subscribed to the event's type)"
  }),
  endpoints: Schema.Array(EndpointDelivery).annotations({
    description: "One entry per endpoint the event was queued for (empty when none was subscribed)"
  })
}).annotations({ identifier: "EventDeliverySummary" })

const eventOf = <T extends WebhookEvent.EventType, D extends Schema.Schema.Any>(
  type: T,
  data: D,
  identifier: string
) =>
  Schema.Struct({
    id: Schema.String,
    type: Schema.Literal(type),
    created_at: Schema.String,
    connection_id: Schema.String,
    data,
    delivery: DeliverySummary
  }).annotations({ identifier })

/**
 * An event as listed: its id, type, time, connection, the delivered body's `data`, and its
 * delivery summary.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Event = Schema.Union(
  eventOf("transfer.arrived", WebhookEvent.TransferEventData, "TransferArrivedEventRecord"),
  eventOf("transfer.completed", WebhookEvent.TransferEventData, "TransferCompletedEventRecord"),
  eventOf("lab_result.received", WebhookEvent.LabResultEventData, "LabResultReceivedEventRecord"),
  eventOf("sync.updates_available", WebhookEvent.SyncUpdatesData, "SyncUpdatesAvailableEventRecord"),
  eventOf("connection.login_required", WebhookEvent.LoginRequiredData, "ConnectionLoginRequiredEventRecord"),
  eventOf("connection.degraded", WebhookEvent.DegradedData, "ConnectionDegradedEventRecord")
).annotations({ identifier: "Event" })

/**
 * `GET /v1/events`'s filters and page.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EventsQuery = Schema.Struct({
  ...Page.PageRequest.fields,
  type: Schema.optional(WebhookEvent.EventType).annotations({ description: "Only events of this type" }),
  connection_id: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))).annotations({
    description: "Only events of this connection"
  }),
  "created[gte]": Schema.optional(Schemas.IsoDateTime).annotations({
    description: "Only events created at or after this instant"
  }),
  "created[lte]": Schema.optional(Schemas.IsoDateTime).annotations({
    description: "Only events created at or before this instant"
  }),
  delivery_success: Schema.optional(Schema.Literal("true", "false")).annotations({
    description: "`false`: only events at least one endpoint has not received (pending or failed); " +
      "`true`: only events every endpoint received"
  })
})

const EventPath = Schema.Struct({ event_id: Schema.String })

/**
 * @since 0.1.0
 * @category groups
 */
export class EventsApi extends HttpApiGroup.make("events")
  .annotate(OpenApi.Title, "Events")
  .annotate(
    OpenApi.Description,
    "Every event the organisation's webhooks were sent, kept 30 days, with where its deliveries stand."
  )
  .add(
    HttpApiEndpoint.get("listEvents", "/v1/events")
      .annotate(OpenApi.Transform, errors("params"))
      .annotate(OpenApi.Summary, "List events")
      .annotate(
        OpenApi.Description,
        "The organisation's events, newest first, with their delivery summaries; a connection token lists " +
          "its own connection's only. `delivery_success=false` finds the events an endpoint has not received."
      )
      .setUrlParams(EventsQuery)
      .addSuccess(Envelope.Paginated(Event))
  )
  .add(
    HttpApiEndpoint.get("getEvent", "/v1/events/:event_id")
      .annotate(OpenApi.Transform, errors("owned"))
      .annotate(OpenApi.Summary, "Get an event")
      .annotate(OpenApi.Description, "One event, with its delivery summary.")
      .setPath(EventPath)
      .addSuccess(Envelope.Envelope(Event))
  )
  .middleware(Authentication)
{}
