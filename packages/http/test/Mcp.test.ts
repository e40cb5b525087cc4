/**
 * The MCP server at `/mcp` (issue #34), driven by the SDK's own `Client` over Streamable HTTP
 * against a running server: it lists the tools and calls each; it answers "which packages failed
 * lab tests?" for a sandbox connection; a call without a token is refused; a connection token
 * cannot read another connection; a production organisation gets no write tool.
 */
import { HttpServer } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { call, linkSandbox, productionSignIn, signIn, TestApp } from "./support/TestApp.js"

const origin = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address as { readonly port: number }
  return `http://127.0.0.1:${address.port}`
})

/** An MCP client for a token (none: no Authorization header). */
const connect = (base: string, token: string | undefined) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "tracebridge-test", version: "0.0.0" })
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } }
      })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

type Answer = { readonly isError?: boolean; readonly content: ReadonlyArray<{ readonly text: string }> }
const toolCall = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(async () => {
    const answer = (await client.callTool({ name, arguments: args })) as Answer
    return { isError: answer.isError === true, body: JSON.parse(answer.content[0]!.text) }
  })

describe("MCP at /mcp", () => {
  it.scoped("lists the tools and calls each; finds the packages that failed lab tests", () =>
    Effect.gen(function*() {
      const base = yield* origin
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const client = yield* connect(base, access)
      const listed = yield* Effect.promise(() => client.listTools())
      const names = listed.tools.map((t) => t.name)
      for (
        const name of [
          "list_connections",
          "list_facilities",
          "search_packages",
          "get_package",
          "list_lab_results",
          "list_transfers",
          "list_sales",
          "changes_since",
          "sync_status",
          "chain_of_custody",
          "simulate",
          "split_package",
          "reset_sandbox"
        ]
      ) assert.include(names, name)
      const search = listed.tools.find((t) => t.name === "search_packages")!
      assert.includeMembers(Object.keys((search.inputSchema as { properties: object }).properties), [
        "connection_id",
        "facility_id",
        "tag",
        "lab_testing_state",
        "per_page"
      ])

      const connections = yield* toolCall(client, "list_connections", {})
      assert.isFalse(connections.isError)
      assert.match(connections.body.request_id, /^req_/)
      assert.include(connections.body.data.map((c: { id: string }) => c.id), linked.connection_id)
      const facilities = yield* toolCall(client, "list_facilities", { connection_id: linked.connection_id })
      const where = { connection_id: linked.connection_id, facility_id: facilities.body.data[0].id as string }

      // "which packages failed lab tests?"
      const failed = yield* toolCall(client, "simulate", {
        connection_id: linked.connection_id,
        scenario: "lab_result_received",
        params: { result: "fail" }
      })
      assert.isFalse(failed.isError, JSON.stringify(failed.body))
      const event = failed.body.data.event.data
      const labFacility = { connection_id: linked.connection_id, facility_id: event.facility_id as string }
      const results = yield* toolCall(client, "list_lab_results", { ...labFacility, failed_only: true, per_page: 100 })
      assert.isFalse(results.isError, JSON.stringify(results.body))
      assert.isTrue(results.body.data.length > 0)
      assert.isTrue(results.body.data.every((r: { overall_passed: boolean }) => r.overall_passed === false))
      const testFailed = yield* toolCall(client, "search_packages", { ...labFacility, lab_testing_state: "TestFailed" })
      assert.include(testFailed.body.data.map((p: { id: string }) => p.id), event.package_id)
      const pkg = yield* toolCall(client, "get_package", { ...labFacility, package_id: event.package_id })
      assert.strictEqual(pkg.body.data.lab_testing_state, "TestFailed")

      // a split's new package, then where it came from: itself and its source
      const listedPackages =
        (yield* toolCall(client, "search_packages", { ...where, is_on_hold: "false", per_page: 100 }))
          .body.data as ReadonlyArray<
            {
              id: string
              item_name: string
              item_category: string
              item_strain: string | null
              quantity: number
              unit_of_measure: string
            }
          >
      const source = listedPackages.find((p) => p.quantity >= 5)!
      const split = yield* toolCall(client, "split_package", {
        ...where,
        split: {
          item_name: source.item_name,
          item_category: source.item_category,
          item_strain: source.item_strain,
          quantity: 5,
          unit_of_measure: source.unit_of_measure,
          source_package_ids: [source.id]
        }
      })
      assert.isFalse(split.isError, JSON.stringify(split.body))
      const chain = yield* toolCall(client, "chain_of_custody", { ...where, package_id: split.body.data.id })
      assert.isFalse(chain.isError, JSON.stringify(chain.body))
      assert.deepStrictEqual(
        chain.body.data.packages.map((p: { id: string; depth: number }) => [p.id, p.depth]).slice(0, 2),
        [[split.body.data.id, 0], [source.id, 1]]
      )
      assert.isAtLeast(chain.body.request_ids.length, 3)

      for (
        const [name, args] of [
          ["list_transfers", where],
          ["list_sales", where],
          ["changes_since", { ...where, limit: 5 }],
          ["sync_status", { connection_id: linked.connection_id }],
          ["reset_sandbox", { connection_id: linked.connection_id }]
        ] as const
      ) {
        const answer = yield* toolCall(client, name, args)
        assert.isFalse(answer.isError, `${name}: ${JSON.stringify(answer.body).slice(0, 300)}`)
        assert.match(answer.body.request_id, /^req_/, name)
      }
      const bad = yield* toolCall(client, "search_packages", { ...where, per_page: 1000 })
      assert.isTrue(bad.isError)
      assert.strictEqual(bad.body.error, "invalid_input")
    }).pipe(Effect.provide(TestApp)), 120_000)

  it.scoped(
    "refuses a call without a valid token; a connection token reads its own connection only",
    () =>
      Effect.gen(function*() {
        const base = yield* origin
        const none = yield* Effect.promise(() =>
          fetch(`${base}/mcp`, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
          })
        )
        assert.strictEqual(none.status, 401)
        assert.include(none.headers.get("www-authenticate") ?? "", "Bearer")
        const body = (yield* Effect.promise(() => none.json())) as { error: { type: string } }
        assert.strictEqual(body.error.type, "authentication_error")
        const wrong = yield* Effect.exit(connect(base, "tb_at_not-a-token"))
        assert.strictEqual(wrong._tag, "Failure", "the SDK's client cannot connect with a bad token")

        const { access } = yield* signIn
        const a = yield* linkSandbox(access)
        const b = yield* linkSandbox(access)
        const client = yield* connect(base, a.connection_token!)
        const own = yield* toolCall(client, "list_facilities", { connection_id: a.connection_id })
        assert.isFalse(own.isError)
        const other = yield* toolCall(client, "list_facilities", { connection_id: b.connection_id })
        assert.isTrue(other.isError)
        assert.strictEqual(other.body.status, 403)
        assert.strictEqual(other.body.error.code, "forbidden")
        assert.match(other.body.request_id, /^req_/)
      }).pipe(Effect.provide(TestApp)),
    120_000
  )

  it.scoped("a production organisation gets no write tool", () =>
    Effect.gen(function*() {
      const base = yield* origin
      const production = yield* productionSignIn
      const client = yield* connect(base, production.access)
      const names = (yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name)
      assert.include(names, "list_connections")
      assert.notInclude(names, "simulate")
      assert.notInclude(names, "reset_sandbox")
      assert.notInclude(names, "split_package")
      const refused = yield* toolCall(client, "simulate", { connection_id: "conn_x", scenario: "transfer_arrived" })
      assert.isTrue(refused.isError)
      // and the sandbox organisation's token still answers through /v1 as before
      assert.strictEqual((yield* call("GET", "/v1/connections", { token: production.access })).status, 200)
    }).pipe(Effect.provide(TestApp)), 120_000)
})
