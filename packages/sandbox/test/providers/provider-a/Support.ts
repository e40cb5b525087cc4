/**
 * The provider_a emulator as the adapter's one fake: a sandbox served over msw at a host of its
 * own (`../../support/Upstream.ts`), the adapter's port and sessions for it, and what Metrc-style
 * tests need besides: the queries the adapter sent, a state system that stops answering, emulator
 * answers edited before they reach the adapter (a row the world cannot hold, a time written as a
 * local wall-clock time), and records marked as changed at a given time.
 *
 * Every arrangement goes through the world (its objects, `world.modified`, scenarios) or through
 * answers in Metrc's own JSON given before the emulator (one-shots, a host that stops answering),
 * so that the emulator stays the only fake of the provider.
 */
import { ProviderA, ProviderAConfig } from "@tracebridge/adapter-provider-a"
import type { Sale, Session as SessionType } from "@tracebridge/core"
import { ProviderPort, Session } from "@tracebridge/core"
import type { Generate, World } from "@tracebridge/sandbox"
import { Registry, Sandbox, SandboxServer } from "@tracebridge/sandbox"
import { Effect, Either, Fiber, Layer, Option, TestClock } from "effect"
import { http } from "msw"
import type { SetupServer } from "msw/node"
import * as Emulator from "../../../src/providers/provider-a/Emulator.js"
import * as Upstream from "../../support/Upstream.js"

/** The instant the worlds are generated at. */
export const REFERENCE = "2026-03-15T12:00:00.000Z"
/** The tests' "now": the sandbox's clock and the TestClock's. */
export const NOW = Date.parse(REFERENCE) + 60_000
export const HOUR = 3_600_000

/** The sandbox's user keys: the good one (its world is the one these tests read), and a refused one. */
export const { bad, good } = Registry.get("provider_a").logins

type Json = Record<string, any>

/** An answer with a JSON body. */
export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } })

/** An answer that never comes: it waits until the client gives up (aborts) the request. */
export const hang = (request: Request): Promise<Response> =>
  new Promise<Response>((resolve) => {
    request.signal.addEventListener("abort", () => resolve(Response.error()))
  })

/** A v2 page (`Data`, `Total`, …) with `rows` in place of its own. */
export const withRows = (page: Json, rows: ReadonlyArray<Json>): Json => ({
  ...page,
  Data: rows,
  Total: rows.length,
  TotalRecords: rows.length,
  RecordsOnPage: rows.length
})

/** Metrc's instant with an offset, to the second (`2026-03-15T11:00:00+00:00`). */
const metrcTime = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "+00:00")

/** A provider_a upstream: a sandbox, its host, the good login's world and sessions for it. */
export interface A {
  readonly sandbox: Sandbox.Sandbox
  readonly upstream: Upstream.Upstream
  /** The world the good user key opens. */
  readonly world: World.World
  /** The facility data of the first facility of a role. */
  readonly facility: (role: World.Role) => World.FacilityData
  /** A session at this upstream (the good user key unless told otherwise). */
  readonly session: (userKey?: string) => SessionType.Session
  /** The queries of the requests logged as `GET {path}` (`path` below the state, no query). */
  readonly queries: (path: string) => Array<URLSearchParams>
  /**
   * The next `count` requests of a path get the emulator's answer, edited by `edit` (by default
   * every request of the path from now on, however many the adapter sends: the upstream is the
   * test's own).
   */
  readonly edit: (path: RegExp, edit: (answer: any) => unknown, count?: number) => void
  /** Applies a scenario to the world. */
  readonly scenario: (name: string, params: Record<string, unknown>, at?: number) => void
  /**
   * Marks a record as changed at `at`, as Metrc shows a change: the lastModified windows select it
   * from then, and a package's own `LastModified` says so.
   */
  readonly touch: (id: string, at: number) => void
  /** Moves a sale to another date (recorded and last changed then), with its first line's figures. */
  readonly resell: (
    sale: Sale.Sale,
    date: string,
    line?: { readonly quantity: number; readonly total: number; readonly unit_price: number }
  ) => void
}

/** As many one-shots as any read of these tests sends requests (a year of 24 h windows, and more). */
const EVERY = 1_000

/**
 * A fresh sandbox (of the default size unless told) behind a fresh upstream host, with the
 * emulator's `options`.
 */
export const make = (
  options: { readonly size?: Generate.Size; readonly emulator?: Emulator.Options } = {}
): A => {
  const sandbox = new Sandbox.Sandbox({
    providers: Registry.installed,
    seed: "42",
    referenceDate: REFERENCE,
    now: () => NOW,
    ...(options.size === undefined ? {} : { size: options.size })
  })
  if (options.emulator !== undefined) Emulator.configure(sandbox, options.emulator)
  const upstream = Upstream.make(sandbox)
  const world = sandbox.world("provider_a", "CO", good.user_key!)
  const emulator = SandboxServer.makeHandler(sandbox)
  return {
    sandbox,
    upstream,
    world,
    facility: (role) => {
      const found = world.facilities.find((d) => d.role === role)
      if (found === undefined) throw new Error(`the CO world has no ${role} facility`)
      return found
    },
    session: (userKey = good.user_key!) =>
      Session.make({
        key: `sandbox:${userKey}`,
        provider: "provider_a",
        state: "CO",
        environment: "sandbox",
        credentials: { user_key: userKey },
        baseUrl: upstream.baseUrl("provider_a", "CO")
      }),
    queries: (path) =>
      upstream.log
        .filter((l) => l === `GET ${path}` || l.startsWith(`GET ${path}?`))
        .map((l) => new URL(`https://x${l.slice("GET ".length)}`).searchParams),
    edit: (path, edit, count = EVERY) =>
      upstream.failNext(async (request) => {
        const answer = await emulator(request)
        return json(edit(await answer.json()), answer.status)
      }, { path, count }),
    scenario: (name, params, at = NOW) => {
      const applied = sandbox.apply(world, {
        _tag: "Scenario",
        input: { name, params, at }
      })
      if (Either.isLeft(applied)) throw new Error(`${name}: ${JSON.stringify(applied.left)}`)
    },
    touch: (id, at) => {
      for (const data of world.facilities) {
        data.packages = data.packages.map((p) =>
          p.id === id ? { ...p, metadata: { ...p.metadata, LastModified: metrcTime(at) } } : p
        )
      }
      world.modified.set(id, Math.floor(at / 1000) * 1000)
    },
    resell: (sale, date, line) => {
      for (const data of world.facilities) {
        data.sales = data.sales.map((s) => {
          if (s.id !== sale.id) return s
          const items = line === undefined ? s.items : [{ ...s.items[0]!, ...line }, ...s.items.slice(1)]
          return { ...s, sale_date: date, items, total_price: items.reduce((sum, i) => sum + i.total, 0) }
        })
      }
      world.modified.set(sale.id, Math.floor(Date.parse(date) / 1000) * 1000)
    }
  }
}

/** The provider_a port over fetch (so that msw sees every request), with test settings. */
export const portLayer = (settings: Partial<ProviderAConfig.Settings> = {}) =>
  ProviderA.layer.pipe(Layer.provide(ProviderAConfig.layerTest(settings)), Layer.provide(Upstream.httpClient))

/** Runs `f` with the port, the TestClock at {@link NOW}. */
export const withPort = <A, E>(
  f: (port: ProviderPort.Service) => Effect.Effect<A, E>,
  settings: Partial<ProviderAConfig.Settings> = {}
) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(NOW)
    const port = yield* ProviderPort.ProviderPort
    return yield* f(port)
  }).pipe(Effect.provide(portLayer(settings)))

/**
 * Runs `call` while the upstream stops answering (every request hangs until the client gives it
 * up), moving the TestClock past every try's timeout. `msw` is the server of `useUpstream()`.
 */
export const unanswered = <X, E>(msw: SetupServer, upstream: Upstream.Upstream, call: Effect.Effect<X, E>) => {
  let on = true
  return Effect.gen(function*() {
    msw.use(http.all(`${upstream.origin}/*`, ({ request }) => (on ? hang(request) : undefined)))
    const fiber = yield* Effect.fork(call)
    for (let i = 0; i < 200 && Option.isNone(yield* Fiber.poll(fiber)); i++) {
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      yield* TestClock.adjust("31 seconds")
    }
    return yield* Fiber.join(fiber)
  }).pipe(Effect.ensuring(Effect.sync(() => {
    on = false
  })))
}
