import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { describe, expect, it } from "vitest"
import type { Api } from "../src/index.js"
import { McpServer } from "../src/index.js"

/** A client connected in memory to a server over a recording fake of `/v1`. */
const connected = async (writes: boolean, answer: { status: number; body: unknown } = { status: 200, body: {} }) => {
  const calls: Array<{ method: string; path: string; body: unknown }> = []
  const api: Api = async (method, path, body) => {
    calls.push({ method, path, body })
    return { ...answer, requestId: "req_test" }
  }
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const server = McpServer.make(api, { writes })
  await server.connect(serverSide)
  const client = new Client({ name: "test", version: "0" })
  await client.connect(clientSide)
  return { client, calls }
}

const textOf = (answer: unknown) =>
  JSON.parse((answer as { content: Array<{ text: string }> }).content[0]!.text) as Record<string, unknown>

describe("McpServer", () => {
  it("offers the write tools only to a caller who may write", async () => {
    const reader = await connected(false)
    const names = (await reader.client.listTools()).tools.map((t) => t.name)
    expect(names).toContain("search_packages")
    expect(names).not.toContain("simulate")
    const refused = await reader.client.callTool({ name: "simulate", arguments: { connection_id: "c", scenario: "x" } })
    expect(refused.isError).toBe(true)
    expect(reader.calls).toEqual([])
    const writer = await connected(true)
    expect((await writer.client.listTools()).tools.map((t) => t.name)).toContain("simulate")
  })

  it("maps a tool's input to its /v1 call, encoded, with the request id in the answer", async () => {
    const { calls, client } = await connected(false, { status: 200, body: { data: [] } })
    const answer = await client.callTool({
      name: "search_packages",
      arguments: { connection_id: "conn_1", facility_id: "fac/1", lab_testing_state: "TestFailed", per_page: 10 }
    })
    expect(calls).toEqual([{
      method: "GET",
      path: "/v1/connections/conn_1/facilities/fac%2F1/packages?lab_testing_state=TestFailed&per_page=10",
      body: undefined
    }])
    expect(textOf(answer)).toEqual({ request_id: "req_test", data: [] })
  })

  it("refuses input its schema refuses, and answers a /v1 error as a tool error", async () => {
    const bad = await connected(false)
    const refused = await bad.client.callTool({ name: "list_facilities", arguments: { connection_id: "" } })
    expect(refused.isError).toBe(true)
    expect(textOf(refused).error).toBe("invalid_input")
    const extra = await bad.client.callTool({ name: "sync_status", arguments: { connection_id: "c", x: 1 } })
    expect(extra.isError).toBe(true)
    expect(bad.calls).toEqual([])
    const failing = await connected(false, { status: 403, body: { error: { code: "forbidden" } } })
    const answer = await failing.client.callTool({ name: "sync_status", arguments: { connection_id: "c" } })
    expect(answer.isError).toBe(true)
    expect(textOf(answer)).toEqual({ status: 403, error: { code: "forbidden" }, request_id: "req_test" })
  })

  it("keeps only the failed lab results when asked", async () => {
    const { client } = await connected(false, {
      status: 200,
      body: { data: [{ id: "a", overall_passed: true }, { id: "b", overall_passed: false }] }
    })
    const answer = await client.callTool({
      name: "list_lab_results",
      arguments: { connection_id: "c", facility_id: "f", failed_only: true }
    })
    expect(textOf(answer).data).toEqual([{ id: "b", overall_passed: false }])
  })

  it("walks a package's sources for its chain of custody, and stops at what the token cannot read", async () => {
    const packages: Record<string, { id: string; source_package_ids: Array<string> }> = {
      new: { id: "new", source_package_ids: ["a", "b"] },
      a: { id: "a", source_package_ids: ["root"] },
      root: { id: "root", source_package_ids: [] }
    }
    const api: Api = async (_method, path) => {
      if (path.includes("/transfers")) {
        return { status: 200, body: { data: [{ id: "t1", packages: [{ package_id: "root" }] }] }, requestId: "req_t" }
      }
      const id = decodeURIComponent(path.split("/packages/")[1] ?? "")
      const found = packages[id]
      return found === undefined
        ? { status: 404, body: { error: { code: "resource_not_found" } }, requestId: `req_${id}` }
        : { status: 200, body: { data: found }, requestId: `req_${id}` }
    }
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await McpServer.make(api, { writes: false }).connect(serverSide)
    const client = new Client({ name: "test", version: "0" })
    await client.connect(clientSide)
    const args = { connection_id: "c", facility_id: "f", package_id: "new" }
    const answer = textOf(await client.callTool({ name: "chain_of_custody", arguments: args })) as {
      request_ids: Array<string>
      data: { packages: Array<unknown>; transfers: Array<{ id: string }> }
    }
    expect(answer.data.packages).toEqual([
      { id: "new", source_package_ids: ["a", "b"], depth: 0 },
      { id: "a", source_package_ids: ["root"], depth: 1 },
      { id: "b", unreachable: 404 },
      { id: "root", source_package_ids: [], depth: 2 }
    ])
    expect(answer.data.transfers.map((t) => t.id)).toEqual(["t1"])
    expect(answer.request_ids).toEqual(["req_new", "req_a", "req_b", "req_root", "req_t"])
    const missing = await client.callTool({ name: "chain_of_custody", arguments: { ...args, package_id: "nope" } })
    expect(missing.isError).toBe(true)
  })
})
