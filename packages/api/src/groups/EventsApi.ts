/**
 * The events (DECISIONS "Events", issue #34): every event the organisation's webhooks were sent,
 * newest first, with where its deliveries stand. An event's `data` is the delivered body's `data`,
 * as it was sent. Events are kept 30 days (`TRACEBRIDGE_EVENT_RETENTION_DAYS`).
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Envelope, Page, Schemas, WebhookEvent } from "@tracebridge/core"
import { Schema } from "effect"
import { errors } from "../OpenApiErrors.js"
import { Authentication } from "../Security.js"

/** @since 0.1.0 @category schemas */
export const EndpointDelivery = Schema.Struct({
  webhook_id: Schema.String,
  delivery_id: Schema.String.annotations({
    description: "Redeliver it with POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry"
  }),
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

const eventTypes: ReadonlyArray<string> = WebhookEvent.EventType.literals

/**
 * `GET /v1/events/stream`'s filters: some types (comma-separated) and one connection.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamQuery = Schema.Struct({
  types: Schema.optional(
    Schema.String.pipe(
      Schema.maxLength(500),
      Schema.filter((s) => {
        const unknown = s.split(",").filter((t) => !eventTypes.includes(t))
        return unknown.length === 0 ||
          `unknown event type ${JSON.stringify(unknown[0]!.slice(0, 100))}; expected a comma-separated list of ${
            eventTypes.join(", ")
          }`
      })
    )
  ).annotations({ description: "Only these event types, comma-separated (default: every type)" }),
  connection_id: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))).annotations({
    description: "Only this connection's events"
  })
})

/**
 * `GET /v1/events/stream`'s headers: where to resume.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamHeaders = Schema.Struct({
  "last-event-id": Schema.optional(Schema.String.pipe(Schema.maxLength(200))).annotations({
    description: "The id of the last event received: the stream resumes after it (a few may come again)"
  })
})

/**
 * The stream's body: server-sent events.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EventStream = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" })
).annotations({
  description: "Server-sent events. Each event: `id: <event id>`, `event: <type>`, `data: <the webhook delivery " +
    "body, JSON on one line>`. A `: heartbeat` comment every 15 s when nothing else is sent."
})

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
    HttpApiEndpoint.get("streamEvents", "/v1/events/stream")
      .annotate(OpenApi.Transform, errors("params"))
      .annotate(OpenApi.Summary, "Stream events")
      .annotate(
        OpenApi.Description,
        "Server-sent events: every new event of the organisation (a connection token: of its connection) as it is " +
          "stored, each with its delivery body, from now or after `Last-Event-ID`. A heartbeat comment every 15 s. " +
          "The stream ends when the node drains or the token stops being valid: reconnect with `Last-Event-ID` and a " +
          "valid token. Events stored while no stream was open are sent on resume (within the 30-day retention); a " +
          "few may be sent twice, so deduplicate on the event id."
      )
      .setUrlParams(StreamQuery)
      .setHeaders(StreamHeaders)
      .addSuccess(EventStream)
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
