/**
 * The provider_a (Metrc-style) emulator: every path the provider_a adapter uses, served from the
 * sandbox world in Metrc's own JSON, which the emulator writes itself (`serialize.ts`), not
 * through the adapter's wire schemas, so that a mistake there shows against the emulator.
 *
 * Faithful to the research: HTTP Basic (vendor key : user key; sandbox user keys in `Logins`; a
 * refused key is 401 with `WWW-Authenticate: Basic`), 404 `{Message}` for a path Metrc does not
 * serve (before any licence check), `licenseNumber` scoping (missing: 400, another login's licence: 403), v2 pages of at most 20 in
 * the `Data/Total/…` wrapper (unpaged when no `pageSize`), lastModified windows of at most 24 h
 * (required for sales receipts and deliveries), `{Message}` and `[{row,message}]` error bodies,
 * write bodies as arrays of at most 10 (413), `{Ids,Warnings}` answers, and a 429 with
 * `Retry-After` past a configurable request rate. Optionally (`Options.camelCase`) it answers with
 * camelCase keys, as some states do.
 *
 * This module is the handler: authentication, faults, the request rate, licence scoping and the
 * route tables; the endpoints are in `read.ts` (GET) and `writeEndpoints.ts` (POST).
 *
 * @since 0.1.0
 */
import type { ProviderName } from "@tracebridge/core"
import { Either } from "effect"
import * as Faults from "../../Faults.js"
import { keyOf } from "../../internal/key.js"
import type { Sandbox } from "../../Sandbox.js"
import * as Sandboxes from "../../Sandbox.js"
import * as Read from "./read.js"
import { camelCased, empty, forbidden, message, notFound, rateLimited, unauthorized } from "./responses.js"
import * as Route from "./route.js"
import * as Logins from "./testLogins.js"
import * as Write from "./writeEndpoints.js"

/**
 * Emulator settings.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * GET requests per second per facility (`licenseNumber`; per login for calls that name none)
   * before a 429, and three times as many per integrator (vendor) key, as Metrc limits them
   * (default: no limit).
   */
  readonly requestsPerSecond?: number
  /**
   * Answer with camelCase keys (`data`, `total`, `license.number`) instead of the documented
   * PascalCase, as OpenMetrc observed some states doing (default: PascalCase).
   */
  readonly camelCase?: boolean
  /**
   * Licences whose login may not use the package tags endpoint (`/tags/v2/package/available`,
   * which some states sell as an extra): it answers them 403, as Metrc answers a call the licence
   * has no permission for (default: every licence may).
   */
  readonly withoutTagsEndpoint?: ReadonlyArray<string>
}

const optionsSlot = Sandboxes.slot<Options>("provider_a/options", () => ({}))
/** The current second's request count per facility, login and vendor key (the request rate). */
const windowsSlot = Sandboxes.slot("provider_a/windows", () => new Map<string, { start: number; count: number }>())

/**
 * Sets the emulator's options for a sandbox.
 *
 * @since 0.1.0
 * @category configuration
 */
export const configure = (sandbox: Sandbox, settings: Options): void => {
  sandbox.configure(optionsSlot, settings)
}

// ------------------------------------------------------------------ routes

/** GET endpoints that name no facility (no `licenseNumber`). */
const open: ReadonlyArray<Route.Route<Read.OpenHandler>> = [
  Route.get(["/facilities/v2/", "/facilities/v2"], Read.facilities),
  Route.get("/unitsofmeasure/v2/active", Read.unitsOfMeasure)
]

/** GET endpoints of the facility of `licenseNumber`; the first match answers. */
const reads: ReadonlyArray<Route.Route<Read.Handler>> = [
  Route.get("/packages/v2/active", Read.activePackages),
  Route.get("/packages/v2/onhold", Read.onHoldPackages),
  Route.get("/packages/v2/inactive", Read.inactivePackages),
  Route.get("/packages/v2/{id:int}/source/harvests", Read.packageSourceHarvests),
  Route.get("/packages/v2/{key}", Read.packageByKey),
  Route.get("/tags/v2/package/available", Read.availableTags),
  Route.get("/plants/v2/vegetative", Read.vegetativePlants),
  Route.get("/plants/v2/flowering", Read.floweringPlants),
  Route.get("/plants/v2/inactive", Read.inactivePlants),
  Route.get("/plants/v2/{key}", Read.plantByKey),
  Route.get("/harvests/v2/active", Read.activeHarvests),
  Route.get("/harvests/v2/inactive", Read.inactiveHarvests),
  Route.get("/harvests/v2/{id:int}", Read.harvestById),
  Route.get("/labtests/v2/results", Read.labTestResults),
  Route.get("/transfers/v2/incoming", Read.incomingTransfers),
  Route.get("/transfers/v2/outgoing", Read.outgoingTransfers),
  Route.get("/transfers/v2/rejected", Read.rejectedTransfers),
  Route.get("/transfers/v2/templates/outgoing", Read.outgoingTemplates),
  Route.get("/transfers/v2/deliveries/{id:int}/packages", Read.deliveryPackages),
  Route.get("/transfers/v2/templates/outgoing/{id:int}/deliveries", Read.templateDeliveries),
  Route.get("/transfers/v2/templates/outgoing/deliveries/{id:int}/packages", Read.templateDeliveryPackages),
  Route.get("/sales/v2/receipts/active", Read.activeReceipts),
  Route.get("/sales/v2/receipts/inactive", Read.inactiveReceipts),
  Route.get("/sales/v2/receipts/{id:int}", Read.receiptById),
  Route.get("/sales/v2/deliveries/active", Read.activeDeliveries),
  Route.get("/sales/v2/deliveries/{id:int}", Read.deliveryById),
  Route.get("/items/v2/active", Read.items.active),
  Route.get("/items/v2/inactive", Read.inactiveCatalogue),
  Route.get("/items/v2/{id:int}", Read.items.byId),
  Route.get("/strains/v2/active", Read.strains.active),
  Route.get("/strains/v2/inactive", Read.inactiveCatalogue),
  Route.get("/strains/v2/{id:int}", Read.strains.byId),
  Route.get("/locations/v2/active", Read.locations.active),
  Route.get("/locations/v2/inactive", Read.inactiveCatalogue),
  Route.get("/locations/v2/{id:int}", Read.locations.byId),
  Route.get("/patients/v2/active", Read.patients.active),
  Route.get("/patients/v2/{id:int}", Read.patients.byId)
]

/** POST endpoints of the facility of `licenseNumber`. */
const writes: ReadonlyArray<Route.Route<Write.Handler>> = [
  Route.post("/packages/v2/", Write.createPackage),
  Route.post("/packages/v2/testing", Write.createTestingPackage),
  Route.post("/labtests/v2/record", Write.recordLabTest),
  Route.post("/transfers/v2/templates/outgoing", Write.createTemplate)
]

/** Whether any route, of any method, serves `path`. */
const known = (path: string): boolean =>
  Route.knows(open, path) || Route.knows(reads, path) || Route.knows(writes, path)

// ------------------------------------------------------------------ entry

/** The two halves of a Basic auth header (Metrc: the vendor key, then the user key). */
const basicAuthOf = (request: Request): { readonly user: string; readonly password: string } | undefined => {
  const header = request.headers.get("authorization")
  if (header === null || !header.startsWith("Basic ")) return undefined
  try {
    const decoded = atob(header.slice(6))
    const colon = decoded.indexOf(":")
    return colon <= 0 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
  } catch {
    return undefined
  }
}

const vendorKeyOf = (request: Request): string | undefined => basicAuthOf(request)?.user

const userKeyOf = (request: Request): string | undefined => basicAuthOf(request)?.password

/**
 * Answers one request for `/provider_a/{state}{path}`.
 *
 * @since 0.1.0
 * @category handlers
 */
export const handle = async (
  sandbox: Sandbox,
  state: ProviderName.UsState,
  path: string,
  request: Request
): Promise<Response> => {
  const userKey = userKeyOf(request)
  if (userKey === undefined) return unauthorized()
  const outcome = Logins.checkUserKey(userKey)
  if (outcome._tag === "Invalid") return unauthorized()
  if (outcome._tag === "Locked") {
    return written(sandbox, unauthorized("The user account is locked. Contact the state system's support."))
  }

  const fault = sandbox.fault(keyOf("provider_a", state, outcome.login))
  switch (fault?.kind) {
    case "outage":
      return Faults.outage()
    case "malformed":
      return Faults.malformed()
    case "rate_limited":
      return written(sandbox, rateLimited(Faults.retryAfterOf(fault)))
    case "expired_login":
      // Metrc answers a revoked or expired user key like every refused login.
      return unauthorized()
    default:
      return Faults.delayed(
        await written(sandbox, await answer(sandbox, state, path, request, userKey, outcome.login)),
        Faults.delayFor(fault)
      )
  }
}

/** An answer in the key casing the sandbox's options ask for (the documented PascalCase by default). */
const written = (sandbox: Sandbox, response: Response): Response | Promise<Response> =>
  sandbox.setting(optionsSlot).camelCase === true ? camelCased(response) : response

/** Metrc's integrator (vendor key) limit is three times its per-facility one (150 and 50 GET/s). */
const VENDOR_FACTOR = 3

/**
 * A 429 when the facility (or the login, for a call naming no facility) or the integrator went
 * past the configured rate in the current second, else undefined.
 */
const paced = (sandbox: Sandbox, request: Request, userKey: string): Response | undefined => {
  const limit = sandbox.setting(optionsSlot).requestsPerSecond ?? sandbox.options.requestsPerSecond
  if (limit === undefined) return undefined
  const licence = new URL(request.url).searchParams.get("licenseNumber")
  return over(sandbox, licence === null ? `login:${userKey}` : `licence:${licence}`, limit) ??
    over(sandbox, `vendor:${vendorKeyOf(request) ?? ""}`, limit * VENDOR_FACTOR)
}

const over = (sandbox: Sandbox, key: string, limit: number): Response | undefined => {
  const now = sandbox.now()
  const perKey = sandbox.slot(windowsSlot)
  const current = perKey.get(key)
  if (current === undefined || now - current.start >= 1000) perKey.set(key, { start: now, count: 1 })
  else if (++current.count > limit) return rateLimited(Math.max(1, Math.ceil((current.start + 1000 - now) / 1000)))
  return undefined
}

const answer = async (
  sandbox: Sandbox,
  state: ProviderName.UsState,
  path: string,
  request: Request,
  userKey: string,
  login: string
): Promise<Response> => {
  const limited = request.method === "GET" ? paced(sandbox, request, userKey) : undefined
  if (limited !== undefined) return limited

  const world = sandbox.world("provider_a", state, login)
  if (world.loginRequired === true) {
    // The connection_login_required scenario: the next call finds the login refused, once.
    world.loginRequired = false
    return unauthorized()
  }
  // A path no route serves is Metrc's 404, whatever the method and before the licence is asked for.
  if (!known(path)) return notFound()
  const query = new URL(request.url).searchParams
  if (request.method === "GET") {
    const found = Route.find(open, "GET", path)
    if (found !== undefined) return found.route.handler({ world, query })
  }
  const license = query.get("licenseNumber")
  if (license === null) return message(400, "The licenseNumber parameter is required.")
  const data = world.facilities.find((d) => d.facility.license_number === license)
  if (data === undefined) return forbidden()
  if (request.method === "POST") {
    let body: unknown
    try {
      body = JSON.parse(await request.text())
    } catch {
      return message(400, "The request is invalid.")
    }
    return Either.match(Write.objectsOf(body), {
      onLeft: (refusal) => refusal,
      onRight: (objects) => {
        const found = Route.find(writes, "POST", path)
        if (found === undefined) return notFound()
        return found.route.handler({ sandbox, world, data, body: objects[0], now: sandbox.now() })
      }
    })
  }
  if (request.method !== "GET") return empty(405)
  if (
    path === "/tags/v2/package/available" &&
    sandbox.setting(optionsSlot).withoutTagsEndpoint?.includes(license) === true
  ) {
    return forbidden()
  }
  const found = Route.find(reads, "GET", path)
  if (found === undefined) return notFound()
  return found.route.handler({ world, data, params: found.params, query, now: sandbox.now() })
}
