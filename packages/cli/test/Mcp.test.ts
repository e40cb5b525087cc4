/**
 * `tracebridge mcp`: the MCP tools over stdio, as the configured API client (issue #34), driven by
 * the SDK's own `Client` with its stdio transport against the built server.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { fileURLToPath } from "node:url"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import type { TestServer } from "../../client/test/support/Server.js"
import { startServer } from "../../client/test/support/Server.js"
import { configDir, run } from "./support/Cli.js"

const bin = fileURLToPath(new URL("../bin/tracebridge.mjs", import.meta.url))

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server?.stop()
})

describe("tracebridge mcp", () => {
  it("serves the tools over stdio with the client's credentials: reads, and sandbox writes", async () => {
    const env = {
      TRACEBRIDGE_API_URL: server.baseUrl,
      TRACEBRIDGE_CLIENT_ID: server.clientId,
      TRACEBRIDGE_CLIENT_SECRET: server.clientSecret,
      TRACEBRIDGE_CONFIG_DIR: configDir()
    }
    const triggered = JSON.parse((await run(["trigger", "transfer_arrived", "--json"], env)).stdout.trim()) as {
      connection_id: string
    }
    const client = new Client({ name: "tracebridge-cli-test", version: "0.0.0" })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        // every command takes --json (here a no-op: stdio carries JSON-RPC only)
        args: [bin, "mcp", "--json"],
        env: { ...process.env as Record<string, string>, ...env }
      })
    )
    try {
      const names = (await client.listTools()).tools.map((t) => t.name)
      assert.includeMembers(names, ["list_connections", "sync_status", "simulate", "reset_sandbox"])
      const answer = (await client.callTool({ name: "list_connections", arguments: {} })) as {
        isError?: boolean
        content: Array<{ text: string }>
      }
      assert.notStrictEqual(answer.isError, true)
      const body = JSON.parse(answer.content[0]!.text) as { request_id: string; data: Array<{ id: string }> }
      assert.match(body.request_id, /^req_/)
      assert.include(body.data.map((c) => c.id), triggered.connection_id)
    } finally {
      await client.close()
    }
  })
})
