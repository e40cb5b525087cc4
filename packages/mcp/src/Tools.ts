/**
 * The MCP tools (issue #34): each reads (or, in the sandbox, writes) through the `/v1` API with the
 * caller's own token, so nothing is reachable through MCP that the same token cannot reach through
 * `/v1`. Inputs are Effect schemas built from core's (their JSON Schema is what a client sees);
 * every list is one bounded page (`per_page` at most 100); every answer carries the `/v1` request
 * id.
 *
 * @since 0.1.0
 */
import { Commands, Query } from "@tracebridge/core"
import { Schema } from "effect"

/**
 * One `/v1` call as the tools make it: method, path (with its query string) and JSON body; the
 * answer's status, body and `X-Request-Id`.
 *
 * @since 0.1.0
 * @category models
 */
export type Api = (
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  body?: unknown
) => Promise<{ readonly status: number; readonly body: unknown; readonly requestId: string | null }>

/**
 * A tool: its name, what it does, its input, whether it writes, and the `/v1` call it makes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool {
  readonly name: string
  readonly description: string
  readonly input: Schema.Schema<any, any>
  readonly writes: boolean
  readonly call: (input: any) => {
    readonly method: "GET" | "POST" | "PUT" | "DELETE"
    readonly path: string
    readonly body?: unknown
  }
  /** Several `/v1` calls instead of one (`call` is then the first): the answer, or an error answer. */
  readonly run?: (input: any, api: Api) => Promise<{ readonly error: boolean; readonly body: unknown }>
  /** Narrows the answer's `data` after the call (lab results: the failed only). */
  readonly shape?: (input: any, body: any) => unknown
}

const Id = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
const page = {
  page: Schema.optional(Schema.Int.pipe(Schema.between(1, 1_000_000))).annotations({ description: "From 1" }),
  per_page: Schema.optional(Schema.Int.pipe(Schema.between(1, 100))).annotations({ description: "1 to 100 (25)" })
}
const connection = { connection_id: Id.annotations({ description: "conn_…" }) }
const facility = { ...connection, facility_id: Id.annotations({ description: "fac_… (list_facilities)" }) }

/** A path segment or query value, encoded. */
const e = encodeURIComponent

/** The query string of the given fields (skipping those not set). */
const query = (input: Record<string, unknown>, names: ReadonlyArray<string>): string => {
  const params = new URLSearchParams()
  for (const name of names) {
    const value = input[name]
    if (value !== undefined) params.set(name, String(value))
  }
  const text = params.toString()
  return text === "" ? "" : `?${text}`
}

const base = (input: { connection_id: string; facility_id: string }) =>
  `/v1/connections/${e(input.connection_id)}/facilities/${e(input.facility_id)}`

const listOf = (
  name: string,
  resource: string,
  description: string,
  filters: Schema.Struct.Fields
): Tool => ({
  name,
  description,
  input: Schema.Struct({ ...facility, ...filters, ...page }),
  writes: false,
  call: (input) => ({
    method: "GET",
    path: `${base(input)}/${resource}${query(input, [...Object.keys(filters), "page", "per_page"])}`
  })
})

const { updated_since: _u, ...packageFilters } = Query.Packages.fields

/**
 * Every tool, the writing ones last.
 *
 * @since 0.1.0
 * @category tools
 */
export const tools: ReadonlyArray<Tool> = [
  {
    name: "list_connections",
    description: "The organisation's connections (a connection token: its own) with their status and health.",
    input: Schema.Struct(page),
    writes: false,
    call: (input) => ({ method: "GET", path: `/v1/connections${query(input, ["page", "per_page"])}` })
  },
  {
    name: "list_facilities",
    description: "A connection's licensed facilities.",
    input: Schema.Struct({ ...connection, ...page }),
    writes: false,
    call: (input) => ({
      method: "GET",
      path: `/v1/connections/${e(input.connection_id)}/facilities${query(input, ["page", "per_page"])}`
    })
  },
  listOf(
    "search_packages",
    "packages",
    "A facility's packages, by tag, hold or lab testing state (e.g. TestFailed).",
    {
      ...packageFilters,
      is_on_hold: Schema.optional(Schema.Literal("true", "false"))
    }
  ),
  {
    name: "get_package",
    description: "One package by its Tracebridge id, with its item, quantity, lab state and source packages.",
    input: Schema.Struct({ ...facility, package_id: Id }),
    writes: false,
    call: (input) => ({ method: "GET", path: `${base(input)}/packages/${e(input.package_id)}` })
  },
  {
    name: "list_lab_results",
    description: "A facility's lab results (of one package with package_id); failed_only keeps the failed ones.",
    input: Schema.Struct({
      ...facility,
      package_id: Schema.optional(Id),
      failed_only: Schema.optional(Schema.Boolean),
      ...page
    }),
    writes: false,
    call: (input) => ({
      method: "GET",
      path: `${base(input)}/lab_results${query(input, ["package_id", "page", "per_page"])}`
    }),
    shape: (input, body) =>
      input.failed_only === true && Array.isArray(body?.data)
        ? { ...body, data: body.data.filter((r: { overall_passed?: unknown }) => r.overall_passed === false) }
        : body
  },
  listOf("list_transfers", "transfers", "A facility's transfers, incoming and outgoing.", {
    status: Query.Transfers.fields.status,
    direction: Query.Transfers.fields.direction
  }),
  listOf("list_sales", "sales", "A facility's sales receipts, optionally from and to an ISO date-time.", {
    from: Schema.optional(Id),
    to: Schema.optional(Id)
  }),
  {
    name: "changes_since",
    description: "A facility's change feed from a cursor (none: from the start); store next_cursor to go on.",
    input: Schema.Struct({
      ...facility,
      cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(500))),
      limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 500)))
    }),
    writes: false,
    call: (input) => ({ method: "GET", path: `${base(input)}/changes${query(input, ["cursor", "limit"])}` })
  },
  {
    name: "sync_status",
    description: "The managed sync of a connection's facilities: backfill progress, last sync, errors.",
    input: Schema.Struct(connection),
    writes: false,
    call: (input) => ({ method: "GET", path: `/v1/connections/${e(input.connection_id)}/sync` })
  },
  {
    name: "chain_of_custody",
    description: "Where a package came from: the package and, source by source, the packages it was split or " +
      "made from (up to `depth` steps), with the transfers that brought any of them into the facility.",
    input: Schema.Struct({
      ...facility,
      package_id: Id,
      depth: Schema.optional(Schema.Int.pipe(Schema.between(1, 10))).annotations({ description: "1 to 10 (5)" })
    }),
    writes: false,
    call: (input) => ({ method: "GET", path: `${base(input)}/packages/${e(input.package_id)}` }),
    run: async (input, api) => {
      const requestIds: Array<string> = []
      const packages: Array<unknown> = []
      const seen = new Set<string>()
      let level: ReadonlyArray<string> = [input.package_id]
      for (let step = 0; step <= (input.depth ?? 5) && level.length > 0; step++) {
        const next: Array<string> = []
        for (const id of level) {
          if (seen.has(id) || seen.size >= 50) continue
          seen.add(id)
          const answer = await api("GET", `${base(input)}/packages/${e(id)}`)
          if (answer.requestId !== null) requestIds.push(answer.requestId)
          if (answer.status >= 400) {
            // the first package must exist; a source outside this connection's reach ends that branch
            if (step === 0) {
              return { error: true, body: { status: answer.status, error: answer.body, request_id: answer.requestId } }
            }
            packages.push({ id, unreachable: answer.status })
            continue
          }
          const pkg = (answer.body as { data: { source_package_ids?: ReadonlyArray<string> } }).data
          packages.push({ ...pkg, depth: step })
          next.push(...(pkg.source_package_ids ?? []))
        }
        level = next
      }
      const transfers = await api("GET", `${base(input)}/transfers?direction=incoming&per_page=100`)
      if (transfers.requestId !== null) requestIds.push(transfers.requestId)
      const ids = new Set(packages.map((p) => (p as { id: string }).id))
      const brought = transfers.status < 400
        ? ((transfers.body as { data?: ReadonlyArray<{ packages?: ReadonlyArray<{ package_id?: string }> }> }).data ??
          [])
          .filter((t) => (t.packages ?? []).some((p) => p.package_id !== undefined && ids.has(p.package_id)))
        : []
      return { error: false, body: { request_ids: requestIds, data: { packages, transfers: brought } } }
    }
  },
  {
    name: "split_package",
    description: "Sandbox only: split a quantity off source packages into a new package (POST …/packages).",
    input: Schema.Struct({ ...facility, split: Commands.SplitPackage }),
    writes: true,
    call: (input) => ({
      method: "POST",
      path: `${base(input)}/packages`,
      body: Schema.encodeSync(Commands.SplitPackage)(input.split)
    })
  },
  {
    name: "simulate",
    description: "Sandbox only: run a scenario (transfer_arrived, transfer_completed, lab_result_received, …).",
    input: Schema.Struct({
      ...connection,
      scenario: Id,
      params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
    }),
    writes: true,
    call: (input) => ({
      method: "POST",
      path: `/v1/sandbox/${e(input.connection_id)}/simulate`,
      body: { scenario: input.scenario, params: input.params ?? {} }
    })
  },
  {
    name: "reset_sandbox",
    description: "Sandbox only: put the connection's world back as it was generated.",
    input: Schema.Struct(connection),
    writes: true,
    call: (input) => ({ method: "POST", path: `/v1/sandbox/${e(input.connection_id)}/reset` })
  }
]
