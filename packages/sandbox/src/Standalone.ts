/**
 * The sandbox on a socket: a `node:http` server in front of `SandboxServer.makeHandler`, for CI
 * pipelines and local development (`tracebridge-sandbox`).
 *
 * @since 0.1.0
 */
import { ProviderDescriptor as Descriptor } from "@tracebridge/core"
import { Clock, Effect } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as Faults from "./Faults.js"
import type { Size } from "./Generate.js"
import * as Registry from "./Registry.js"
import { Sandbox } from "./Sandbox.js"
import { nameOf } from "./SandboxProvider.js"
import type { Handler } from "./SandboxServer.js"
import { baseUrl, makeHandler } from "./SandboxServer.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly port: number
  readonly host: string
  readonly seed: string
  /** ISO 8601; defaults to the start of the current UTC day (read once, from `Clock`). */
  readonly referenceDate?: string | undefined
  readonly size?: Size | undefined
  /**
   * Upstream requests per second per login before a 429 with `Retry-After`, as Metrc answers
   * bursts (default {@link DEFAULT_REQUESTS_PER_SECOND}; 0 turns it off).
   */
  readonly requestsPerSecond?: number | undefined
}

/**
 * The standalone sandbox's default burst limit: Metrc's per-facility figure that integrators'
 * clients default to (50 requests per second).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_REQUESTS_PER_SECOND = 50

/**
 * @since 0.1.0
 * @category models
 */
export interface Running {
  readonly sandbox: Sandbox
  readonly server: Server
  readonly origin: string
  readonly close: () => Promise<void>
}

const now = () => Effect.runSync(Clock.currentTimeMillis)

const toRequest = async (req: IncomingMessage, origin: string): Promise<Request> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const headers = new Headers()
  for (const [key, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(key, value)
    else if (Array.isArray(value)) { for (const v of value) headers.append(key, v) }
  }
  const body = chunks.length > 0 && req.method !== "GET" && req.method !== "HEAD" ? Buffer.concat(chunks) : undefined
  return new Request(new URL(req.url ?? "/", origin), {
    method: req.method ?? "GET",
    headers,
    ...(body ? { body } : {})
  })
}

/** Holds a `slow` fault's answer back (the standalone server runs on the wall clock). */
const delay = (ms: number): Promise<void> =>
  ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve()

const send = async (res: ServerResponse, response: Response) => {
  res.statusCode = response.status
  response.headers.forEach((value, key) => res.setHeader(key, value))
  res.end(Buffer.from(await response.arrayBuffer()))
}

/**
 * Serves a handler on `node:http`.
 *
 * @since 0.1.0
 * @category servers
 */
export const serve = (handler: Handler, port: number, host: string): Promise<{ server: Server; origin: string }> =>
  new Promise((resolve, reject) => {
    let origin = `http://${host}:${port}`
    const server = createServer((req, res) => {
      toRequest(req, origin)
        .then(handler)
        .then((response) => delay(Faults.delayOf(response)).then(() => response))
        .then((response) => send(res, response))
        .catch(() => {
          res.statusCode = 500
          res.end(JSON.stringify({ error: "internal_error" }))
        })
    })
    server.once("error", reject)
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo
      origin = `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`
      resolve({ server, origin })
    })
  })

/**
 * Starts the standalone sandbox.
 *
 * @since 0.1.0
 * @category servers
 */
export const start = async (options: Options): Promise<Running> => {
  const day = 86_400_000
  const referenceDate = options.referenceDate ?? new Date(Math.floor(now() / day) * day).toISOString()
  const sandbox = new Sandbox({
    seed: options.seed,
    referenceDate,
    now,
    ...(options.size ? { size: options.size } : {}),
    ...((options.requestsPerSecond ?? DEFAULT_REQUESTS_PER_SECOND) > 0
      ? { requestsPerSecond: options.requestsPerSecond ?? DEFAULT_REQUESTS_PER_SECOND }
      : {})
  })
  const { origin, server } = await serve(makeHandler(sandbox), options.port, options.host)
  return {
    sandbox,
    server,
    origin,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}

/**
 * The banner the CLI prints: where each provider lives and the test logins.
 *
 * @since 0.1.0
 * @category servers
 */
export const banner = (running: Running): string => {
  const { origin, sandbox } = running
  const installed = sandbox.options.providers ?? Registry.installed
  return [
    `Tracebridge sandbox on ${origin}  (seed ${sandbox.options.seed}, reference date ${sandbox.options.referenceDate})`,
    "",
    ...installed.providers.flatMap((provider) => {
      const name = nameOf(provider)
      return [
        `  ${`${name} (${provider.banner.style})`.padEnd(32)} ${baseUrl(origin, name, "{STATE}")}   e.g. ${
          baseUrl(origin, name, Descriptor.states(provider.module.descriptor)[0] ?? "CO")
        }${provider.banner.examplePath}`,
        `    good login: ${provider.banner.loginHint}`
      ]
    }),
    "",
    `  control: GET ${origin}/_sandbox/state · POST ${origin}/_sandbox/reset · POST ${origin}/_sandbox/seed · POST ${origin}/_sandbox/scenarios/{name}`
  ].join("\n")
}
