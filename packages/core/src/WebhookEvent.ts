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

const envelopeFields = {
  id: EventId,
  created: IsoDateTime,
  api_version: Schema.Literal(API_VERSION)
}

/**
 * @since 0.1.0
 * @category schemas
 */
export const TransferArrived = Schema.Struct({
  ...envelopeFields,
  type: Schema.Literal("transfer.arrived"),
  data: TransferEventData
}).annotations({ identifier: "TransferArrivedEvent" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const TransferCompleted = Schema.Struct({
  ...envelopeFields,
  type: Schema.Literal("transfer.completed"),
  data: TransferEventData
}).annotations({ identifier: "TransferCompletedEvent" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const LabResultReceived = Schema.Struct({
  ...envelopeFields,
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
  ...envelopeFields,
  type: Schema.Literal("sync.updates_available"),
  data: SyncUpdatesData
}).annotations({ identifier: "SyncUpdatesAvailableEvent" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const ConnectionLoginRequired = Schema.Struct({
  ...envelopeFields,
  type: Schema.Literal("connection.login_required"),
  data: LoginRequiredData
}).annotations({ identifier: "ConnectionLoginRequiredEvent" })

/**
 * @since 0.1.0
 * @category schemas
 */
export const ConnectionDegraded = Schema.Struct({
  ...envelopeFields,
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

/**
 * What an event carries around its data, apart from its type: its id and when it was created
 * (the API version is `API_VERSION`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Envelope {
  readonly id: EventId
  readonly created: string
}

/**
 * Each event type's delivery body.
 *
 * @since 0.1.0
 * @category models
 */
export interface Events {
  readonly "transfer.arrived": typeof TransferArrived.Type
  readonly "transfer.completed": typeof TransferCompleted.Type
  readonly "lab_result.received": typeof LabResultReceived.Type
  readonly "sync.updates_available": typeof SyncUpdatesAvailable.Type
  readonly "connection.login_required": typeof ConnectionLoginRequired.Type
  readonly "connection.degraded": typeof ConnectionDegraded.Type
}

/**
 * The `data` an event type carries.
 *
 * @since 0.1.0
 * @category models
 */
export type DataOf<T extends EventType> = Events[T]["data"]

/** One constructor per type, each the type's own schema's `make` (checked against it). */
const constructors: { readonly [T in EventType]: (envelope: Envelope, data: DataOf<T>) => Events[T] } = {
  "transfer.arrived": ({ created, id }, data) =>
    TransferArrived.make({ id, created, api_version: API_VERSION, type: "transfer.arrived", data }),
  "transfer.completed": ({ created, id }, data) =>
    TransferCompleted.make({ id, created, api_version: API_VERSION, type: "transfer.completed", data }),
  "lab_result.received": ({ created, id }, data) =>
    LabResultReceived.make({ id, created, api_version: API_VERSION, type: "lab_result.received", data }),
  "sync.updates_available": ({ created, id }, data) =>
    SyncUpdatesAvailable.make({ id, created, api_version: API_VERSION, type: "sync.updates_available", data }),
  "connection.login_required": ({ created, id }, data) =>
    ConnectionLoginRequired.make({ id, created, api_version: API_VERSION, type: "connection.login_required", data }),
  "connection.degraded": ({ created, id }, data) =>
    ConnectionDegraded.make({ id, created, api_version: API_VERSION, type: "connection.degraded", data })
}

/**
 * An event of `type` in `envelope` with `data`, typed per event type (the compiler checks the
 * data's shape) and checked against the type's schema at run time (a mistake in the caller is a
 * defect). The API version is `API_VERSION`.
 *
 * @example
 * ```ts
 * WebhookEvent.make("transfer.arrived", { id, created }, { id: t.id, connection_id, facility_id, transfer: t })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <T extends EventType>(type: T, envelope: Envelope, data: DataOf<T>): Events[T] =>
  constructors[type](envelope, data)

/**
 * The envelope of an event minted now: `id` (`evt_…`) and `at` (epoch ms), with the creation time
 * to the second, as every event is stamped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const envelope = (id: string, at: number): Envelope => ({
  id: EventId.make(id),
  created: new Date(Math.floor(at / 1000) * 1000).toISOString()
})

/**
 * What an event says, without the envelope it is delivered in: its type and its data, apart from
 * the connection it is for. The sandbox's scenarios fire these; `wrap` makes one the event a
 * connection receives.
 *
 * @since 0.1.0
 * @category models
 */
export type Change = {
  readonly [T in EventType]: { readonly type: T; readonly data: Omit<DataOf<T>, "connection_id"> }
}[EventType]

/**
 * A change in the envelope of the connection it is for: the event that connection receives,
 * checked against its type's schema as `make` checks it.
 *
 * @example
 * ```ts
 * WebhookEvent.wrap(change, WebhookEvent.envelope(id, at), connection.id)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const wrap = (change: Change, envelope: Envelope, connectionId: string): WebhookEvent =>
  make(change.type, envelope, { ...change.data, connection_id: ConnectionId.make(connectionId) } as DataOf<EventType>)
