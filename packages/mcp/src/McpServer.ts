/**
 * The MCP server (issue #34) on `@modelcontextprotocol/sdk`: the {@link Tools.tools} for one
 * caller, over any transport. `handle` answers one Streamable HTTP request statelessly (a server
 * per request: any API node can answer any request); the CLI serves the same server over stdio.
 *
 * @since 0.1.0
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Either, JSONSchema, ParseResult, Schema } from "effect"
import type { Api, Tool } from "./Tools.js"
import { tools } from "./Tools.js"

/**
 * Who calls: whether the write tools are offered (a sandbox organisation's token; never a
 * production one).
 *
 * @since 0.1.0
 * @category models
 */
export interface Caller {
  readonly writes: boolean
}

/**
 * The tools a caller is offered.
 *
 * @since 0.1.0
 * @category tools
 */
export const offered = (caller: Caller): ReadonlyArray<Tool> => tools.filter((t) => caller.writes || !t.writes)

const text = (value: unknown, isError = false) => ({
  content: [{ type: "text" as const, text: JSON.stringify(value) }],
  ...(isError ? { isError: true } : {})
})

/**
 * An MCP server whose tools call `/v1` through `api` (the caller's own token).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (api: Api, caller: Caller): Server => {
  const server = new Server({ name: "tracebridge", version: "0.1.0" }, { capabilities: { tools: {} } })
  const available = offered(caller)
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: available.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: JSONSchema.make(tool.input) as { type: "object" }
    }))
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = available.find((t) => t.name === request.params.name)
    if (tool === undefined) return text({ error: `no tool ${request.params.name} for this token` }, true)
    const input = Schema.decodeUnknownEither(tool.input, { onExcessProperty: "error" })(request.params.arguments ?? {})
    if (Either.isLeft(input)) {
      return text({ error: "invalid_input", message: ParseResult.TreeFormatter.formatErrorSync(input.left) }, true)
    }
    if (tool.run !== undefined) {
      const result = await tool.run(input.right, api)
      return text(result.body, result.error)
    }
    const { body, method, path } = tool.call(input.right)
    const answer = await api(method, path, body)
    if (answer.status >= 400) {
      const error = (answer.body as { error?: unknown } | null)?.error ?? answer.body
      return text({ status: answer.status, error, request_id: answer.requestId }, true)
    }
    const shaped = tool.shape === undefined ? answer.body : tool.shape(input.right, answer.body)
    return text({ request_id: answer.requestId, ...(shaped as object) })
  })
  return server
}

/**
 * Answers one Streamable HTTP request (JSON answers, no session): a server for this request only.
 * `parsedBody` is the JSON body when the host has read it already.
 *
 * @since 0.1.0
 * @category http
 */
export const handle = async (
  request: Request,
  api: Api,
  caller: Caller,
  parsedBody?: unknown
): Promise<Response> => {
  const server = make(api, caller)
  // no session id generator: stateless, so that any node answers any request
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true })
  await server.connect(transport)
  try {
    return await transport.handleRequest(request, parsedBody === undefined ? {} : { parsedBody })
  } finally {
    await server.close()
  }
}

/**
 * The `/v1` API over `fetch` with a bearer token (or a function that gives a fresh one per call,
 * as the CLI's SDK renews its access token), for the tools.
 *
 * @since 0.1.0
 * @category api
 */
export const fetchApi = (
  origin: string,
  token: string | (() => Promise<string>),
  fetcher: typeof fetch = fetch
): Api =>
async (method, path, body) => {
  const bearer = typeof token === "string" ? token : await token()
  const response = await fetcher(`${origin}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${bearer}`,
      accept: "application/json",
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const textBody = await response.text()
  let parsed: unknown = null
  try {
    parsed = textBody === "" ? null : JSON.parse(textBody)
  } catch {
    parsed = textBody
  }
  return { status: response.status, body: parsed, requestId: response.headers.get("x-request-id") }
}
