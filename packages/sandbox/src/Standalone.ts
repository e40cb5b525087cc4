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
import * as ControlApi from "./ControlApi.js"
import * as Faults from "./Faults.js"
import type { Size } from "./Generate.js"
import * as Registry from "./Registry.js"
import { Sandbox } from "./Sandbox.js"
import { nameOf } from "./SandboxProvider.js"
import type { Handler } from "./SandboxServer.js"
import { baseUrl, makeHandler } from "./SandboxServer.js"
import * as Scenario from "./Scenario.js"

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
   * GET requests per second per facility (and three times as many per vendor key) before a 429
   * with `Retry-After`, as Metrc answers bursts (default {@link DEFAULT_REQUESTS_PER_SECOND}; 0 turns it off).
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
 * What `tracebridge-sandbox` uses for a flag it is not given.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULTS = {
  port: 4010,
  host: "127.0.0.1",
  seed: "42",
  size: "small",
  requestsPerSecond: DEFAULT_REQUESTS_PER_SECOND
} as const

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
    providers: Registry.installed,
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
  const installed = Registry.installed
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
    `  control: GET ${origin}/_sandbox/state · POST ${origin}/_sandbox/reset · POST ${origin}/_sandbox/seed · POST ${origin}/_sandbox/scenarios/{name} · GET|PUT|DELETE ${origin}/_sandbox/faults`,
    "  (tracebridge-sandbox --help: the flags, each provider's auth and every control route)"
  ].join("\n")
}

/**
 * What `tracebridge-sandbox --json` prints once it listens, as one JSON line: the banner's facts
 * for a script (the origin, the seed and reference date, each provider's base URL template and an
 * example, and the control routes).
 *
 * @since 0.1.0
 * @category banner
 */
export const started = (running: Running) => {
  const { origin, sandbox } = running
  return {
    origin,
    seed: sandbox.options.seed,
    reference_date: sandbox.options.referenceDate,
    providers: Registry.installed.providers.map((provider) => {
      const name = nameOf(provider)
      const example = Descriptor.states(provider.module.descriptor)[0] ?? "CO"
      return {
        provider: name,
        style: provider.banner.style,
        base_url: baseUrl(origin, name, "{STATE}"),
        example_url: `${baseUrl(origin, name, example)}${provider.banner.examplePath}`,
        good_login: provider.banner.loginHint
      }
    }),
    control: {
      state: `${origin}/_sandbox/state`,
      reset: `${origin}/_sandbox/reset`,
      seed: `${origin}/_sandbox/seed`,
      scenarios: `${origin}/_sandbox/scenarios/{name}`,
      faults: `${origin}/_sandbox/faults`
    }
  }
}

const credentials = (login: Readonly<Record<string, string>>) =>
  Object.entries(login).map(([field, value]) => `${field}=${value}`).join(" ")

/** `text` in lines of at most `width` characters, the first after `label`, the others indented to match. */
const wrapped = (label: string, text: string, width = 100): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = label
  for (const word of text.split(" ")) {
    if (line.length > label.length && line.length + 1 + word.length > width) {
      lines.push(line)
      line = " ".repeat(label.length) + word
    } else {
      line = line.length > label.length ? `${line} ${word}` : `${line}${word}`
    }
  }
  return [...lines, line]
}

/**
 * What `tracebridge-sandbox --help` prints: the flags with their defaults, and, for every installed
 * provider (from the registration list, so a new provider shows up here by itself), its base URL
 * per state, how a client authenticates, and its test logins; then the control API.
 *
 * @since 0.1.0
 * @category servers
 */
export const help = (providers: Registry.Lookup = Registry.installed): string => {
  const origin = `http://${DEFAULTS.host}:${DEFAULTS.port}`
  const flags: ReadonlyArray<readonly [string, string]> = [
    ["--port <n>", `TCP port; 0 picks a free one (default ${DEFAULTS.port}, or $PORT)`],
    ["--host <address>", `address to listen on (default ${DEFAULTS.host})`],
    ["--seed <text>", `seed of every world (default ${DEFAULTS.seed})`],
    ["--size small|large|<n>", `packages per facility: small, large or a number (default ${DEFAULTS.size})`],
    ["--reference-date <ISO 8601>", "the worlds' \"today\" (default: the start of the current UTC day)"],
    [
      "--requests-per-second <n>",
      `GET calls a second per facility (3x per vendor key) before a 429 with Retry-After, where the emulated system limits bursts; 0: no limit (default ${DEFAULTS.requestsPerSecond})`
    ],
    ["--json", "once listening, print one JSON line (origin, providers' base URLs, control routes), not the banner"],
    ["-h, --help", "print this and exit"]
  ]
  const width = Math.max(...flags.map(([flag]) => flag.length)) + 2
  return [
    "Usage: tracebridge-sandbox [options]",
    "",
    "A deterministic emulator of every installed state system's own wire API over seeded worlds, for CI.",
    "The same seed, login and reference date always give the same data: pin --seed and --reference-date.",
    "",
    "Options:",
    ...flags.flatMap(([flag, text]) => wrapped(`  ${flag.padEnd(width)}`, text)),
    "",
    `Providers (base URL {origin}/{provider}/{STATE}; origin ${origin} with the defaults):`,
    ...providers.providers.flatMap((provider) => {
      const name = nameOf(provider)
      const states = Descriptor.states(provider.module.descriptor)
      return [
        "",
        `  ${name} (${provider.banner.style})`,
        `    base URL     ${baseUrl(origin, name, "{STATE}")}`,
        ...wrapped("    STATE        ", states.join(", ")),
        `    example      ${baseUrl(origin, name, states[0] ?? "CO")}${provider.banner.examplePath}`,
        ...(provider.banner.auth === undefined ? [] : wrapped("    auth         ", provider.banner.auth)),
        `    login works  ${credentials(provider.logins.good)}`,
        `    wrong login  ${credentials(provider.logins.bad)}`,
        `    locked       ${credentials(provider.logins.locked)}`
      ]
    }),
    "",
    "  Any login whose user part starts with user_good works, and each distinct one (user_good_2, …)",
    "  gets a world of its own. A path a provider does not serve answers 404.",
    "",
    "Control API (on the same origin):",
    ...ControlApi.routes.map((route) => `  ${route.method.padEnd(7)}${route.path}\n${" ".repeat(9)}${route.does}`),
    "",
    ...wrapped("  scenarios    ", Scenario.names.join(", ")),
    ...wrapped("  fault kinds  ", Faults.Fault.members.map((member) => member.fields.kind.literals[0]).join(", ")),
    "",
    "Ready when GET /_sandbox/state answers 200. Guide for CI users: docs/sandbox.md."
  ].join("\n")
}
