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
 *
 * The public `/v1/sandbox/{connection_id}/simulate` runs the same scenarios.
 *
 * @since 0.1.0
 */
import { ProviderName } from "@tracebridge/core"
import { Either, Schema } from "effect"
import type { Sandbox } from "./Sandbox.js"
import { keyOf } from "./Sandbox.js"
import type * as Scenario from "./Scenario.js"

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
    input = request.method === "POST" ? await body(request) : undefined
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
    if (Either.isRight(ref)) sandbox.reset(keyOf(ref.right.provider, ref.right.state, ref.right.login))
    else sandbox.reset()
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
    const result = sandbox.apply<Scenario.Outcome, Scenario.Failure>(world, {
      _tag: "Scenario",
      input: {
        name: scenario[1]!,
        params: params ?? {},
        connection_id: connection_id ?? "conn_sandbox",
        at: sandbox.now()
      }
    })
    return Either.match(result, {
      onLeft: (failure) =>
        failure._tag === "UnknownScenario"
          ? error(400, "unknown_scenario", failure.message)
          : failure._tag === "InvalidInput"
          ? error(400, "invalid_parameter", failure.message)
          : failure._tag === "ResourceNotFound"
          ? error(404, "resource_not_found", failure.message)
          : error(409, "invalid_state_transition", failure.message),
      onRight: (outcome) =>
        json({ scenario: outcome.scenario, event: outcome.event, login_required: outcome.loginRequired })
    })
  }
  return error(404, "not_found", `No control route ${request.method} ${url.pathname}`)
}
