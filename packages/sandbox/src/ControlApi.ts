/**
 * The control API beside the emulated providers (the role of moto's `/moto-api`):
 *
 * | route | does |
 * |---|---|
 * | `GET /_sandbox/state` | the seed, reference date and the worlds generated so far |
 * | `GET /_sandbox/state?provider=&state=&login=` | one world, as JSON (facilities, transfers, change count) |
 * | `POST /_sandbox/reset` | forget every world (body `{provider, state, login}`: just that one) |
 * | `POST /_sandbox/seed` | body `{seed, reference_date?}`: reseed and forget every world |
 * | `POST /_sandbox/scenarios/{name}` | body `{provider, state, login, params?, connection_id?}`: run a scenario, answer its event |
 * | `GET /_sandbox/faults` | every fault set, by world |
 * | `PUT /_sandbox/faults` | body `{provider, state, login, fault: {kind, delay_ms?, retry_after?}}`: set a world's fault |
 * | `DELETE /_sandbox/faults?provider=&state=&login=` | clear a world's fault (no query: every fault) |
 *
 * A reset also clears the faults of the worlds it forgets.
 *
 * The public `/v1/sandbox/{connection_id}/simulate` runs the same scenarios.
 *
 * @since 0.1.0
 */
import { ProviderName, WebhookEvent } from "@tracebridge/core"
import { Either, Schema } from "effect"
import * as Faults from "./Faults.js"
import type { Sandbox } from "./Sandbox.js"
import { keyOf } from "./Sandbox.js"
import * as Scenario from "./Scenario.js"

/**
 * A route of the control API, as data.
 *
 * @since 0.1.0
 * @category models
 */
export interface Route {
  readonly method: "GET" | "POST" | "PUT" | "DELETE"
  readonly path: string
  readonly does: string
}

/**
 * Every route of the control API (the table above), for `tracebridge-sandbox --help` and the
 * standalone banner. Any other path under `/_sandbox` answers 404 `not_found`.
 *
 * @since 0.1.0
 * @category constants
 */
export const routes: ReadonlyArray<Route> = [
  { method: "GET", path: "/_sandbox/state", does: "seed, reference date and the worlds generated so far" },
  {
    method: "GET",
    path: "/_sandbox/state?provider=&state=&login=",
    does: "one world as JSON (facilities, transfers, change count)"
  },
  {
    method: "POST",
    path: "/_sandbox/reset",
    does: "forget every world and fault (body {provider, state, login}: one)"
  },
  { method: "POST", path: "/_sandbox/seed", does: "body {seed, reference_date?}: reseed and forget every world" },
  {
    method: "POST",
    path: "/_sandbox/scenarios/{name}",
    does: "body {provider, state, login, params?, connection_id?}: run a scenario, answer its event"
  },
  { method: "GET", path: "/_sandbox/faults", does: "every fault set, by world" },
  {
    method: "PUT",
    path: "/_sandbox/faults",
    does: "body {provider, state, login, fault: {kind, delay_ms?, retry_after?}}: set a world's fault"
  },
  { method: "DELETE", path: "/_sandbox/faults?provider=&state=&login=", does: "clear a world's fault (no query: all)" }
]

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } })

const error = (status: number, code: string, message: string) => json({ error: { code, message } }, status)

const WorldRef = Schema.Struct({
  provider: ProviderName.ProviderName,
  state: ProviderName.UsState,
  login: Schema.String
})

const body = async (request: Request): Promise<unknown> => {
  const text = await request.text()
  return text.trim() === "" ? {} : JSON.parse(text)
}

/**
 * @since 0.1.0
 * @category handlers
 */
export const handle = async (sandbox: Sandbox, request: Request): Promise<Response> => {
  const url = new URL(request.url)
  const path = url.pathname.replace(/\/+$/, "")
  let input: unknown
  try {
    input = request.method === "POST" || request.method === "PUT" ? await body(request) : undefined
  } catch {
    return error(400, "invalid_json", "The body is not JSON")
  }
  if (request.method === "GET" && path === "/_sandbox/state") {
    const q = url.searchParams
    if (!q.has("provider")) {
      return json({ seed: sandbox.options.seed, reference_date: sandbox.options.referenceDate, worlds: sandbox.keys() })
    }
    const ref = Schema.decodeUnknownEither(WorldRef)({
      provider: q.get("provider"),
      state: q.get("state"),
      login: q.get("login")
    })
    if (Either.isLeft(ref)) return error(400, "invalid_parameter", "provider, state and login are required")
    const world = sandbox.world(ref.right.provider, ref.right.state, ref.right.login)
    return json({
      key: keyOf(world.provider, world.state, world.login),
      seed: world.seed,
      reference_date: world.referenceDate,
      changes: sandbox.log(keyOf(world.provider, world.state, world.login)).length,
      facilities: world.facilities,
      transfers: world.transfers.map((t) => t.transfer)
    })
  }
  if (request.method === "POST" && path === "/_sandbox/reset") {
    const ref = Schema.decodeUnknownEither(WorldRef)(input)
    if (Either.isRight(ref)) {
      sandbox.reset(keyOf(ref.right.provider, ref.right.state, ref.right.login))
    } else {
      sandbox.reset()
    }
    return json({ reset: Either.isRight(ref) ? keyOf(ref.right.provider, ref.right.state, ref.right.login) : "all" })
  }
  if (request.method === "POST" && path === "/_sandbox/seed") {
    const seed = Schema.decodeUnknownEither(
      Schema.Struct({ seed: Schema.String, reference_date: Schema.optional(Schema.String) })
    )(input)
    if (
      Either.isLeft(seed) ||
      (seed.right.reference_date !== undefined && Number.isNaN(Date.parse(seed.right.reference_date)))
    ) {
      return error(400, "invalid_parameter", "Expected {seed, reference_date?}")
    }
    sandbox.reseed(
      seed.right.seed,
      seed.right.reference_date === undefined
        ? undefined
        : new Date(Date.parse(seed.right.reference_date)).toISOString()
    )
    return json({ seed: sandbox.options.seed, reference_date: sandbox.options.referenceDate })
  }
  if (path === "/_sandbox/faults") return faults(sandbox, request.method, url.searchParams, input)
  const scenario = /^\/_sandbox\/scenarios\/([a-z_]+)$/.exec(path)
  if (request.method === "POST" && scenario !== null) {
    const decoded = Schema.decodeUnknownEither(Schema.Struct({
      ...WorldRef.fields,
      params: Schema.optional(Schema.Unknown),
      connection_id: Schema.optional(Schema.String)
    }))(input)
    if (Either.isLeft(decoded)) {
      return error(400, "invalid_parameter", "Expected {provider, state, login, params?, connection_id?}")
    }
    const { connection_id, login, params, provider, state } = decoded.right
    const world = sandbox.world(provider, state, login)
    const at = sandbox.now()
    const result = sandbox.apply<Scenario.Outcome, Scenario.Failure>(world, {
      _tag: "Scenario",
      input: { name: scenario[1]!, params: params ?? {}, at }
    })
    return Either.match(result, {
      onLeft: (failure) =>
        failure._tag === "UnknownScenario"
          ? error(400, "unknown_scenario", failure.message)
          : failure._tag === "InvalidInput"
          ? error(400, "invalid_parameter", failure.message)
          : failure._tag === "ResourceNotFound"
          ? error(404, "resource_not_found", failure.message)
          : failure._tag === "Exhausted"
          ? error(422, "scenario_exhausted", failure.message)
          : error(409, "invalid_state_transition", failure.message),
      onRight: (outcome) =>
        json({
          scenario: outcome.scenario,
          // the envelope, as the API's simulate wraps it, with the world's own number for the event
          event: outcome.change === null ? null : WebhookEvent.wrap(
            outcome.change,
            WebhookEvent.envelope(Scenario.eventId(world, outcome.serial!), at),
            connection_id ?? "conn_sandbox"
          ),
          login_required: outcome.loginRequired
        })
    })
  }
  return error(404, "not_found", `No control route ${request.method} ${url.pathname}`)
}

const FaultInput = Schema.Struct({ ...WorldRef.fields, fault: Faults.Fault })

const splitKey = (key: string) => {
  const [provider, state, ...login] = key.split("|")
  return { key, provider, state, login: login.join("|") }
}

const faults = (sandbox: Sandbox, method: string, query: URLSearchParams, input: unknown): Response => {
  switch (method) {
    case "GET":
      return json({ faults: sandbox.faultList().map(([key, fault]) => ({ ...splitKey(key), fault })) })
    case "PUT": {
      const decoded = Schema.decodeUnknownEither(FaultInput)(input)
      if (Either.isLeft(decoded)) {
        return error(
          400,
          "invalid_parameter",
          "Expected {provider, state, login, fault: {kind: outage | slow | rate_limited | malformed | expired_login, delay_ms?, retry_after?}}"
        )
      }
      const { fault, login, provider, state } = decoded.right
      const key = keyOf(provider, state, login)
      sandbox.setFault(key, fault)
      return json({ ...splitKey(key), fault })
    }
    case "DELETE": {
      if (!query.has("provider") && !query.has("state") && !query.has("login")) {
        sandbox.clearFaults()
        return json({ cleared: "all" })
      }
      const ref = Schema.decodeUnknownEither(WorldRef)({
        provider: query.get("provider"),
        state: query.get("state"),
        login: query.get("login")
      })
      if (Either.isLeft(ref)) return error(400, "invalid_parameter", "provider, state and login are required")
      const key = keyOf(ref.right.provider, ref.right.state, ref.right.login)
      sandbox.setFault(key, null)
      return json({ cleared: key })
    }
    default:
      return error(405, "method_not_allowed", `No control route ${method} /_sandbox/faults`)
  }
}
