/**
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import type { LabResult, ProviderError, ProviderPort, Session } from "@tracebridge/core"
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
import { Effect, identity, Option } from "effect"
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
 * in the envelope of one object (HttpApi encodes it): `answer` of what the call returned. A
 * sandbox write may announce an event, built from the same value (see {@link Announced}).
 */
const answered = <W, A>(
  path: FacilityPath,
  call: (port: ProviderPort.Service, session: Session.Session) => Effect.Effect<W, ProviderError.ProviderError>,
  mode: "read" | "write",
  announce: Announce<W> | undefined,
  answer: (written: W) => A
) =>
  Effect.gen(function*() {
    const reached = yield* reachable(path.connection_id)
    // The port refuses every write outside the sandbox (403 `sandbox_only`) before any request:
    // asking the state system for the facility list first would only cost a call.
    if (mode === "read" || reached.is_sandbox) yield* ownFacility(reached, path.facility_id)
    const { connection, value } = yield* callOn(reached, call, mode, announce)
    return yield* Envelope.one(answer(value), { provider: connection.provider, state: connection.state })
  })

/** A provider call's result for a connection's facility, as it is, in the envelope of one object. */
const one = <A>(
  path: FacilityPath,
  call: (port: ProviderPort.Service, session: Session.Session) => Effect.Effect<A, ProviderError.ProviderError>,
  mode: "read" | "write" = "read"
) => answered(path, call, mode, undefined, identity)

/**
 * What a sandbox write announces and what it answers, both from the one value its call returned
 * (`W`: the written object with whatever else the event needs, read with the write on the same
 * world).
 */
interface Announced<W, A> {
  readonly event: Announce<W>
  readonly answer: (written: W) => A
}

/** A recorded lab result and the tag of its package, as read right after the write. */
interface LabResultWritten {
  readonly result: LabResult.LabResult
  readonly packageTag: string
}

/**
 * A lab result recorded at `facility`, with its package's tag read on the same world (an empty tag
 * when the package cannot be read there, as the poller's event has).
 */
const recordLabResult = (
  port: ProviderPort.Service,
  session: Session.Session,
  facility: string,
  command: Parameters<ProviderPort.Service["recordLabResult"]>[2]
): Effect.Effect<LabResultWritten, ProviderError.ProviderError> =>
  Effect.flatMap(port.recordLabResult(session, facility, command), (result) =>
    Effect.map(
      Effect.option(port.get("packages", session, facility, result.package_id)),
      (pkg): LabResultWritten => ({ result, packageTag: Option.match(pkg, { onNone: () => "", onSome: (p) => p.tag }) })
    ))

/**
 * A sandbox lab result's `lab_result.received` (the spec: every new lab result attached to a
 * package of the connection), shaped as the `lab_result_received` scenario's; the write answers
 * with the lab result.
 */
const labResultReceived: Announced<LabResultWritten, LabResult.LabResult> = {
  event: ({ packageTag, result }, connection, envelope) =>
    WebhookEvents.make("lab_result.received", envelope, {
      id: result.id,
      connection_id: Ids.ConnectionId.make(connection.id),
      facility_id: result.facility_id,
      package_id: result.package_id,
      package_tag: packageTag,
      passed: result.overall_passed,
      failed_panel: [...LabResults.failedPanel(result)],
      lab_result: result
    }),
  answer: ({ result }) => result
}

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
          // the stored objects' JSON spliced into the envelope, unparsed (the same bytes as encoding them)
          const { items, pagination } = stored.value.page
          const meta = { ...(yield* Envelope.meta({ ...context, sync: stored.value.sync })), skipped: [] }
          return HttpServerResponse.text(
            `{"data":[${items.join(",")}],"meta":${JSON.stringify(meta)},"pagination":${JSON.stringify(pagination)}}`,
            { contentType: "application/json" }
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
        const meta = yield* Envelope.meta({ ...context, sync: stored.value.sync })
        return HttpServerResponse.text(`{"data":${stored.value.object.value},"meta":${JSON.stringify(meta)}}`, {
          contentType: "application/json"
        })
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
    .handle("createLabResult", ({ path, payload }) =>
      answered(
        path,
        (port, session) =>
          recordLabResult(port, session, path.facility_id, payload),
        "write",
        labResultReceived.event,
        labResultReceived.answer
      ))
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
