/**
 * @since 0.1.0
 */
import type { HttpServerResponse } from "@effect/platform"
import { HttpApiBuilder } from "@effect/platform"
import type { LabResult, ProviderError, ProviderPort, Session, WebhookEvent } from "@tracebridge/core"
import {
  Envelope as CoreEnvelope,
  Ids,
  LabResult as LabResults,
  type Page,
  ProviderName,
  Resource,
  WebhookEvent as WebhookEvents
} from "@tracebridge/core"
import { Reads } from "@tracebridge/sync"
import type { Schema } from "effect"
import { Effect, Option } from "effect"
import { Api } from "../Api.js"
import * as Errors from "../Errors.js"
import * as FastJson from "../FastJson.js"
import type { Connection } from "../persistence/ConnectionStore.js"
import * as Envelope from "./envelope.js"
import type { Announce } from "./provider.js"
import { callOn, ownFacility, reachable, reachableFacility } from "./provider.js"

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

/**
 * A provider call's result for a connection's facility (one of the connection's: `ownFacility`),
 * in the envelope of one object (HttpApi encodes it).
 */
const one = <A>(
  path: FacilityPath,
  call: (port: ProviderPort.Service, session: Session.Session) => Effect.Effect<A, ProviderError.ProviderError>,
  mode: "read" | "write" = "read",
  announce?: Announce<A>
) =>
  Effect.gen(function*() {
    const reached = yield* reachable(path.connection_id)
    // The port refuses every write outside the sandbox (403 `sandbox_only`) before any request:
    // asking the state system for the facility list first would only cost a call.
    if (mode === "read" || reached.is_sandbox) yield* ownFacility(reached, path.facility_id)
    const { connection, value } = yield* callOn(reached, call, mode, announce)
    return yield* Envelope.one(value, { provider: connection.provider, state: connection.state })
  })

/**
 * A sandbox lab result's `lab_result.received` (the spec: every new lab result attached to a
 * package of the connection), shaped as the `lab_result_received` scenario's.
 */
const labResultReceived = (tag: () => string): Announce<LabResult.LabResult> => (result, connection, envelope) =>
  ({
    ...envelope,
    type: "lab_result.received",
    api_version: WebhookEvents.API_VERSION,
    data: {
      id: result.id,
      connection_id: connection.id,
      facility_id: result.facility_id,
      package_id: result.package_id,
      package_tag: tag(),
      passed: result.overall_passed,
      failed_panel: [...LabResults.failedPanel(result)],
      lab_result: result
    }
  }) as unknown as WebhookEvent.WebhookEvent

/** A list's query string as the endpoint decodes it: the page rules and the resource's filters. */
type ListParams<R extends Resource.Name> = Page.PageRequest & Resource.Filters<R>

/** The filters of a list's query string, without its page rules. */
const filtersOf = <R extends Resource.Name>(urlParams: ListParams<R>): Resource.Filters<R> => {
  const { page: _page, per_page: _perPage, ...filters } = urlParams
  return filters as Resource.Filters<R>
}

/** The facility's licence (its provider id), for store reads of a production connection. */
const storeLicense = (connection: Connection, facilityId: string): Option.Option<string> =>
  connection.is_sandbox || !ProviderName.isProviderName(connection.provider)
    ? Option.none()
    : Ids.decodeAs("facility", connection.provider, facilityId)

const list =
  <R extends Resource.Name>(resource: R) => ({ path, urlParams }: { path: FacilityPath; urlParams: ListParams<R> }) =>
    Effect.gen(function*() {
      const connection = yield* reachableFacility(path.connection_id, path.facility_id)
      const context = { provider: connection.provider, state: connection.state }
      const filters = filtersOf(urlParams)
      const request = { page: urlParams.page, per_page: urlParams.per_page }
      // a production facility the sync has backfilled is answered from the store
      const license = storeLicense(connection, path.facility_id)
      if (Option.isSome(license)) {
        const stored = yield* Reads.list(connection.id, path.facility_id, license.value, resource, filters, request)
        if (Option.isSome(stored)) {
          return responders[resource].page(
            yield* Envelope.page(stored.value.page, { ...context, sync: stored.value.sync })
          )
        }
      }
      const { value } = yield* callOn(
        connection,
        (port, session) => port.list(resource, session, path.facility_id, filters, request)
      )
      return responders[resource].page(yield* Envelope.page(value, context))
    })

const get = (resource: Resource.Name) => ({ path }: { path: ObjectPath }) =>
  Effect.gen(function*() {
    const connection = yield* reachableFacility(path.connection_id, path.facility_id)
    const context = { provider: connection.provider, state: connection.state }
    if (Option.isSome(storeLicense(connection, path.facility_id))) {
      const stored = yield* Reads.get(connection.id, path.facility_id, resource, path.id)
      if (Option.isSome(stored)) {
        if (Option.isNone(stored.value.object)) {
          return yield* Errors.fail(
            "not_found_error",
            "resource_not_found",
            `No ${Resource.resources[resource].kind.replaceAll("_", " ")} with id ${path.id}`
          )
        }
        return responders[resource].one(
          yield* Envelope.one(stored.value.object.value, { ...context, sync: stored.value.sync })
        )
      }
    }
    const { value } = yield* callOn(
      connection,
      (port, session) => port.get(resource, session, path.facility_id, path.id)
    )
    return responders[resource].one(yield* Envelope.one(value, context))
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
      one(path, (port, session) => port.chainOfCustody(session, path.facility_id, path.id)))
    .handle("createPackage", ({ path, payload }) =>
      one(path, (port, session) =>
        port.splitPackage(session, path.facility_id, payload), "write"))
    .handle("listPlants", list("plants"))
    .handle("getPlant", get("plants"))
    .handle("listHarvests", list("harvests"))
    .handle("getHarvest", get("harvests"))
    .handle("listLabResults", list("lab_results"))
    .handle("getLabResult", get("lab_results"))
    .handle("createLabResult", ({ path, payload }) => {
      // the package's tag, read with the write on the same world, for the event
      let tag = ""
      return one(
        path,
        (port, session) =>
          Effect.tap(port.recordLabResult(session, path.facility_id, payload), (result) =>
            port.get("packages", session, path.facility_id, result.package_id).pipe(
              Effect.tap((pkg) =>
                Effect.sync(() => (tag = pkg.tag))
              ),
              Effect.ignore
            )),
        "write",
        labResultReceived(() =>
          tag
        )
      )
    })
    .handle("listTransfers", list("transfers"))
    .handle("getTransfer", get("transfers"))
    .handle("createTransfer", ({ path, payload }) =>
      one(path, (port, session) =>
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
