/**
 * @since 0.1.0
 */
import type { HttpServerResponse } from "@effect/platform"
import { HttpApiBuilder } from "@effect/platform"
import type { ProviderError, ProviderPort, Session } from "@tracebridge/core"
import { Envelope as CoreEnvelope, Resource } from "@tracebridge/core"
import type { Schema } from "effect"
import { Effect } from "effect"
import { Api } from "../Api.js"
import * as FastJson from "../FastJson.js"
import * as Envelope from "./envelope.js"
import { withConnection } from "./provider.js"

type FacilityPath = { readonly connection_id: string; readonly facility_id: string }
type ObjectPath = FacilityPath & { readonly id: string }

/** Each resource's answers, encoded once (FastJson): the contract's schemas, compiled at start. */
const responders = Object.fromEntries(
  Object.entries(Resource.resources).map(([name, definition]) => [name, {
    page: FastJson.responder(CoreEnvelope.Paginated(definition.schema as Schema.Schema<unknown>)),
    one: FastJson.responder(CoreEnvelope.Envelope(definition.schema as Schema.Schema<unknown>))
  }])
) as Record<Resource.Name, {
  readonly page: (value: unknown) => HttpServerResponse.HttpServerResponse
  readonly one: (value: unknown) => HttpServerResponse.HttpServerResponse
}>

/** A provider call's result for a connection, in the envelope of one object (HttpApi encodes it). */
const one = <A>(
  connectionId: string,
  call: (port: ProviderPort.Service, session: Session.Session) => Effect.Effect<A, ProviderError.ProviderError>,
  mode: "read" | "write" = "read"
) =>
  Effect.gen(function*() {
    const { connection, value } = yield* withConnection(connectionId, call, mode)
    return yield* Envelope.one(value, { provider: connection.provider, state: connection.state })
  })

const list = (resource: Resource.Name) => ({ path, urlParams }: { path: FacilityPath; urlParams: any }) =>
  Effect.gen(function*() {
    const { page, per_page, ...filters } = urlParams
    const { connection, value } = yield* withConnection(
      path.connection_id,
      (port, session) => port.list(resource, session, path.facility_id, filters as never, { page, per_page })
    )
    return responders[resource].page(
      yield* Envelope.page(value, { provider: connection.provider, state: connection.state })
    )
  })

const get = (resource: Resource.Name) => ({ path }: { path: ObjectPath }) =>
  Effect.gen(function*() {
    const { connection, value } = yield* withConnection(path.connection_id, (port, session) =>
      port.get(resource, session, path.facility_id, path.id))
    return responders[resource].one(
      yield* Envelope.one(value, { provider: connection.provider, state: connection.state })
    )
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const HttpResourcesLive = HttpApiBuilder.group(Api, "resources", (handlers) =>
  handlers
    .handle("listPackages", list("packages") as never)
    .handle("getPackage", get("packages") as never)
    .handle("getChainOfCustody", ({ path }) =>
      one(path.connection_id, (port, session) => port.chainOfCustody(session, path.facility_id, path.id)))
    .handle("createPackage", ({ path, payload }) =>
      one(path.connection_id, (port, session) =>
        port.splitPackage(session, path.facility_id, payload), "write"))
    .handle("listPlants", list("plants") as never)
    .handle("getPlant", get("plants") as never)
    .handle("listHarvests", list("harvests") as never)
    .handle("getHarvest", get("harvests") as never)
    .handle("listLabResults", list("lab_results") as never)
    .handle("getLabResult", get("lab_results") as never)
    .handle("createLabResult", ({ path, payload }) =>
      one(path.connection_id, (port, session) =>
        port.recordLabResult(session, path.facility_id, payload), "write"))
    .handle("listTransfers", list("transfers") as never)
    .handle("getTransfer", get("transfers") as never)
    .handle("createTransfer", ({ path, payload }) =>
      one(path.connection_id, (port, session) =>
        port.createTransfer(session, path.facility_id, payload), "write"))
    .handle("listSales", list("sales") as never)
    .handle("getSale", get("sales") as never)
    .handle("listSalesDeliveries", list("sales_deliveries") as never)
    .handle("getSalesDelivery", get("sales_deliveries") as never)
    .handle("listItems", list("items") as never)
    .handle("getItem", get("items") as never)
    .handle("listStrains", list("strains") as never)
    .handle("getStrain", get("strains") as never)
    .handle("listLocations", list("locations") as never)
    .handle("getLocation", get("locations") as never)
    .handle("listPatients", list("patients") as never)
    .handle("getPatient", get("patients") as never))
