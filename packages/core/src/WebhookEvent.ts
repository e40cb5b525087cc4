/**
 * The webhook delivery bodies of DECISIONS "Webhooks": `transfer.arrived`,
 * `transfer.completed` and `lab_result.received`.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { ConnectionId, FacilityId, LabResultId, PackageId, TransferId } from "./Ids.js"
import { LabResult } from "./LabResult.js"
import { IsoDateTime } from "./Schemas.js"
import { Transfer } from "./Transfer.js"

/**
 * The API version stamped on every delivery.
 *
 * @since 0.1.0
 * @category constants
 */
export const API_VERSION = "0.1.0"

/**
 * Every event name a subscription can ask for.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EventType = Schema.Literal(
  "transfer.arrived",
  "transfer.completed",
  "lab_result.received",
  "sync.updates_available",
  "connection.login_required",
  "connection.degraded"
).annotations({
  identifier: "EventType"
})

/**
 * @since 0.1.0
 * @category models
 */
export type EventType = typeof EventType.Type

/**
 * An event id, `evt_…`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EventId = Schema.String.pipe(Schema.pattern(/^evt_[A-Za-z0-9_-]+$/), Schema.brand("EventId"))

/**
 * @since 0.1.0
 * @category models
 */
export type EventId = typeof EventId.Type

/**
 * `data` of the `transfer.*` events.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TransferEventData = Schema.Struct({
  id: TransferId,
  connection_id: ConnectionId,
  facility_id: FacilityId,
  transfer: Transfer
}).annotations({ identifier: "TransferEventData" })

/**
 * `data` of `lab_result.received`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LabResultEventData = Schema.Struct({
  id: LabResultId,
  connection_id: ConnectionId,
  facility_id: FacilityId,
  package_id: PackageId,
  package_tag: Schema.String,
  passed: Schema.Boolean,
  failed_panel: Schema.Array(Schema.String).annotations({ description: "Names of the failed tests" }),
  lab_result: LabResult
}).annotations({ identifier: "LabResultEventData" })

const envelope = {
  id: EventId,
  created: IsoDateTime,
  api_version: Schema.Literal(API_VERSION)
}

/**
 * @since 0.1.0
 * @category schemas
 */
export const TransferArrived = Schema.Struct({
  ...envelope,
  type: Schema.Literal("transfer.arrived"),
  data: TransferEventData
}).annotations({ identifier: "TransferArrivedEvent" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const TransferCompleted = Schema.Struct({
  ...envelope,
  type: Schema.Literal("transfer.completed"),
  data: TransferEventData
}).annotations({ identifier: "TransferCompletedEvent" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const LabResultReceived = Schema.Struct({
  ...envelope,
  type: Schema.Literal("lab_result.received"),
  data: LabResultEventData
}).annotations({ identifier: "LabResultReceivedEvent" })

/**
 * `data` of `sync.updates_available`: new changes are in the facility's feed (`GET P/changes`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const SyncUpdatesData = Schema.Struct({
  connection_id: ConnectionId,
  facility_id: FacilityId,
  changes: Schema.Int.annotations({ description: "How many changes this pass stored" })
}).annotations({ identifier: "SyncUpdatesData" })

/**
 * `data` of `connection.login_required`: the state system refused the stored login; link the
 * connection again (relink) to resume.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LoginRequiredData = Schema.Struct({
  connection_id: ConnectionId
}).annotations({ identifier: "LoginRequiredData" })

/**
 * `data` of `connection.degraded`: the state system has failed for 15 minutes.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DegradedData = Schema.Struct({
  connection_id: ConnectionId,
  facility_id: FacilityId,
  error: Schema.String.annotations({ description: "The last upstream failure" })
}).annotations({ identifier: "DegradedData" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const SyncUpdatesAvailable = Schema.Struct({
  ...envelope,
  type: Schema.Literal("sync.updates_available"),
  data: SyncUpdatesData
}).annotations({ identifier: "SyncUpdatesAvailableEvent" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const ConnectionLoginRequired = Schema.Struct({
  ...envelope,
  type: Schema.Literal("connection.login_required"),
  data: LoginRequiredData
}).annotations({ identifier: "ConnectionLoginRequiredEvent" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const ConnectionDegraded = Schema.Struct({
  ...envelope,
  type: Schema.Literal("connection.degraded"),
  data: DegradedData
}).annotations({ identifier: "ConnectionDegradedEvent" })

/**
 * Any delivery body, discriminated by `type`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebhookEvent = Schema.Union(
  TransferArrived,
  TransferCompleted,
  LabResultReceived,
  SyncUpdatesAvailable,
  ConnectionLoginRequired,
  ConnectionDegraded
).annotations({
  identifier: "WebhookEvent"
})

/**
 * @since 0.1.0
 * @category models
 */
export type WebhookEvent = typeof WebhookEvent.Type

/**
 * An event from its JSON shape, checked against the schema (a mistake in the caller is a defect).
 *
 * @since 0.1.0
 * @category constructors
 */
export const decode: (input: unknown) => WebhookEvent = Schema.decodeUnknownSync(WebhookEvent)
