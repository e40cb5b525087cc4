/**
 * @since 0.1.0
 */
import type { HttpServerResponse } from "@effect/platform"
import { HttpApiBuilder } from "@effect/platform"
import type { ProviderError, ProviderPort, Session } from "@tracebridge/core"
import { Envelope as CoreEnvelope, type Page, Resource } from "@tracebridge/core"
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

/** A list's query string as the endpoint decodes it: the page rules and the resource's filters. */
type ListParams<R extends Resource.Name> = Page.PageRequest & Resource.Filters<R>

/** The filters of a list's query string, without its page rules. */
const filtersOf = <R extends Resource.Name>(urlParams: ListParams<R>): Resource.Filters<R> => {
  const { page: _page, per_page: _perPage, ...filters } = urlParams
  return filters as Resource.Filters<R>
}

const list =
  <R extends Resource.Name>(resource: R) => ({ path, urlParams }: { path: FacilityPath; urlParams: ListParams<R> }) =>
    Effect.gen(function*() {
      const { connection, value } = yield* withConnection(
        path.connection_id,
        (port, session) =>
          port.list(resource, session, path.facility_id, filtersOf(urlParams), {
            page: urlParams.page,
            per_page: urlParams.per_page
          })
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
    .handle("listPackages", list("packages"))
    .handle("getPackage", get("packages"))
    .handle("getChainOfCustody", ({ path }) =>
      one(path.connection_id, (port, session) => port.chainOfCustody(session, path.facility_id, path.id)))
    .handle("createPackage", ({ path, payload }) =>
      one(path.connection_id, (port, session) =>
        port.splitPackage(session, path.facility_id, payload), "write"))
    .handle("listPlants", list("plants"))
    .handle("getPlant", get("plants"))
    .handle("listHarvests", list("harvests"))
    .handle("getHarvest", get("harvests"))
    .handle("listLabResults", list("lab_results"))
    .handle("getLabResult", get("lab_results"))
    .handle("createLabResult", ({ path, payload }) =>
      one(path.connection_id, (port, session) =>
        port.recordLabResult(session, path.facility_id, payload), "write"))
    .handle("listTransfers", list("transfers"))
    .handle("getTransfer", get("transfers"))
    .handle("createTransfer", ({ path, payload }) =>
      one(path.connection_id, (port, session) =>
        port.createTransfer(session, path.facility_id, payload), "write"))
    .handle("listSales", list("sales"))
    .handle("getSale", get("sales"))
    .handle("listSalesDeliveries", list("sales_deliveries"))
    .handle("getSalesDelivery", get("sales_deliveries"))
    .handle("listItems", list("items"))
    .handle("getItem", get("items"))
    .handle("listStrains", list("strains"))
    .handle("getStrain", get("strains"))
    .handle("listLocations", list("locations"))
    .handle("getLocation", get("locations"))
    .handle("listPatients", list("patients"))
    .handle("getPatient", get("patients")))
