/**
 * The emulators as the one fake of each provider, for the adapters' own tests: every sandbox made
 * here is served over msw at a host of its own (`https://upstream-<n>.sandbox.test`), so that the
 * adapters run on `FetchHttpClient` exactly as in production, while each test can
 *
 * - read the requests the adapter sent (`log`, as `METHOD path?query`, and `bodies`);
 * - answer the next requests itself (`failNext`: an outage, a 429, a malformed page …), before
 *   the emulator sees them; every other request is the emulator's. A one-shot can be kept to the
 *   requests of a path (`path`) or to any requests a predicate picks (`match`, given the request
 *   and its parsed JSON body: provider_b's action API has one path, and its `body.action` says
 *   what is asked).
 *
 * Call `useUpstream()` once per test file (it starts and stops msw); `Upstream.make` as often as
 * needed. Tests that run concurrently each get their own host, so they never see each other's
 * requests or one-shot answers.
 */
import type { HttpClient } from "@effect/platform"
import { FetchHttpClient } from "@effect/platform"
import type { ProviderName } from "@tracebridge/core"
import type { Sandbox } from "@tracebridge/sandbox"
import { SandboxServer } from "@tracebridge/sandbox"
import type { Layer } from "effect"
import { http } from "msw"
import { setupServer } from "msw/node"
import { afterAll, beforeAll } from "vitest"

interface OneShot {
  readonly path?: RegExp
  readonly match?: Match
  readonly respond: (request: Request) => Response | Promise<Response>
}

/**
 * Picks the requests a one-shot answers: the request, and its body parsed as JSON (the text when
 * it is not JSON; `undefined` when there is none).
 */
export type Match = (request: Request, body: unknown) => boolean

/** One emulated upstream: a sandbox behind its own host. */
export interface Upstream {
  readonly sandbox: Sandbox.Sandbox
  /** The host's origin, `https://upstream-<n>.sandbox.test`. */
  readonly origin: string
  /** Every request received, as `METHOD path?query` (the path below the provider and state). */
  readonly log: Array<string>
  /** The JSON body of every request that had one, in order. */
  readonly bodies: Array<unknown>
  /** The base URL a session uses to reach `provider` in `state` here. */
  readonly baseUrl: (provider: ProviderName.ProviderName, state: string) => string
  /**
   * The next `count` requests (only those whose path, below the provider and state, matches
   * `path`, and that `match` picks, when given) are answered by `respond` instead of the emulator.
   */
  readonly failNext: (
    respond: (request: Request) => Response | Promise<Response>,
    options?: { readonly count?: number; readonly path?: RegExp; readonly match?: Match }
  ) => void
}

const upstreams = new Map<string, { readonly upstream: Upstream; readonly oneShots: Array<OneShot> }>()
let counter = 0

/** The path below `/{provider}/{state}`, and the query. */
const below = (url: URL): string => url.pathname.replace(/^\/[a-z0-9_]+\/[A-Za-z]{2}(?=\/|$)/, "") || "/"

/**
 * A sandbox served at a host of its own.
 */
export const make = (sandbox: Sandbox.Sandbox): Upstream => {
  const host = `upstream-${++counter}.sandbox.test`
  const oneShots: Array<OneShot> = []
  const upstream: Upstream = {
    sandbox,
    origin: `https://${host}`,
    log: [],
    bodies: [],
    baseUrl: (provider, state) => SandboxServer.baseUrl(`https://${host}`, provider, state),
    failNext: (respond, options = {}) => {
      for (let i = 0; i < (options.count ?? 1); i++) {
        oneShots.push({
          respond,
          ...(options.path ? { path: options.path } : {}),
          ...(options.match ? { match: options.match } : {})
        })
      }
    }
  }
  upstreams.set(host, { upstream, oneShots })
  return upstream
}

const emulators = new WeakMap<Sandbox.Sandbox, SandboxServer.Handler>()
const emulatorOf = (sandbox: Sandbox.Sandbox): SandboxServer.Handler => {
  let handler = emulators.get(sandbox)
  if (handler === undefined) {
    handler = SandboxServer.makeHandler(sandbox)
    emulators.set(sandbox, handler)
  }
  return handler
}

const route = http.all(/^https:\/\/upstream-\d+\.sandbox\.test\//, async ({ request }) => {
  const url = new URL(request.url)
  const entry = upstreams.get(url.host)
  if (entry === undefined) return new Response("no such upstream", { status: 502 })
  const { oneShots, upstream } = entry
  const path = below(url)
  upstream.log.push(`${request.method} ${path}${url.search}`)
  const text = request.method === "GET" || request.method === "HEAD" ? "" : await request.clone().text()
  let body: unknown = undefined
  if (text !== "") {
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
    upstream.bodies.push(body)
  }
  const at = oneShots.findIndex((o) =>
    (o.path === undefined || o.path.test(path)) && (o.match === undefined || o.match(request, body))
  )
  if (at >= 0) return oneShots.splice(at, 1)[0]!.respond(request)
  return emulatorOf(upstream.sandbox)(request)
})

/** Starts msw for the test file: the upstream hosts route to their sandboxes; anything else is an error. */
export const useUpstream = () => {
  const server = setupServer(route)
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }))
  afterAll(() => server.close())
  return server
}

/** The HttpClient the adapters get in these tests: fetch, so that msw sees every request. */
export const httpClient: Layer.Layer<HttpClient.HttpClient> = FetchHttpClient.layer
