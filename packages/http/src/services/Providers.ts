/**
 * The providers behind `/v1`: one port per provider for sandbox connections (their `HttpClient`
 * answers in process from the sandbox emulator, so sandbox traffic runs the real adapters) and one
 * per provider for production connections (a real `HttpClient`). It builds a connection's session
 * from its stored, encrypted login, and keeps each sandbox connection's world: generated from the
 * seed, kept current with the change log, version and fault stored in the database
 * (`SandboxState`), whichever process made them.
 *
 * The ports come from the provider catalog (`Catalog` of `@tracebridge/providers`), a sandbox
 * login's world from the sandbox's `Registry` (its test logins): adding a provider changes nothing
 * here or in any handler.
 *
 * Every request a production port sends upstream first takes a token of the upstream rate governor
 * (`UpstreamGovernor`, ADR 0015), whose buckets (one per provider, vendor key and licence) live in
 * the database and are shared by every node. Sandbox ports are not governed: the in-process
 * emulator answers at once and has no limit.
 *
 * Every provider call of a `/v1` request runs through `upstream`: one deadline for the request
 * (`TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS`, 30 s), every try and retry included. The adapters see
 * it (`Deadline`) and do not retry past it; a call still running then is cut with
 * `ProviderTimeout` (504 `provider_timeout` with `Retry-After`, `Errors.fromProviderError`). The
 * cut is made at each port call, under the sandbox's read cache (`Deadline.cut`): an answer the
 * cache keeps reaches no state system, so it runs on the request's fiber with no timer raced
 * against it (the race forked two fibers a read, a quarter of a cached read's CPU).
 *
 * A connection's session (its login decrypted) and the world its sandbox login opens are made once
 * and kept while the connection row each request reads names the same stored login; a relink, a
 * re-encryption or a disconnect (on any node: the row is read on every request) makes them again.
 *
 * `facilityIds` is the connection's facility list as its provider reports it (what
 * `GET /v1/connections/{id}/facilities` lists), kept per connection and login for
 * `FACILITY_IDS_TTL`: every facility-level path and the sync check a facility against it (issue #28)
 * without an upstream call per request.
 *
 * @since 0.1.0
 */
import { FetchHttpClient, HttpClient } from "@effect/platform"
import type { ProviderName, Session } from "@tracebridge/core"
import {
  Deadline,
  ProviderError,
  ProviderPort,
  ProviderPorts,
  Session as Sessions,
  UpstreamGovernor
} from "@tracebridge/core"
import { Catalog } from "@tracebridge/providers"
import { Logins, ReadCache, Registry, Sandbox, SandboxServer } from "@tracebridge/sandbox"
import type { Scope } from "effect"
import { Context, Duration, Effect, identity, Layer, Option } from "effect"
import * as AppConfig from "../AppConfig.js"
import * as DatabaseGovernor from "../DatabaseGovernor.js"
import { Lru } from "../Lru.js"
import * as Metrics from "../Metrics.js"
import type { Connection } from "../persistence/ConnectionStore.js"
import { SandboxLog } from "../persistence/SandboxLog.js"
import { UpstreamBuckets } from "../persistence/UpstreamBuckets.js"
import * as PortCalls from "../PortCalls.js"
import * as RequestLogCapture from "../RequestLogCapture.js"
import { Crypto } from "./Crypto.js"
import * as SandboxState from "./SandboxState.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly sandbox: Sandbox.Sandbox
  readonly descriptors: ReadonlyArray<ProviderPort.Service["descriptor"]>
  /** The port for a provider, sandbox or production. */
  readonly port: (provider: string, sandbox: boolean) => Effect.Effect<Option.Option<ProviderPort.Service>>
  /** The session of a stored connection (its login decrypted, `Redacted`). */
  readonly session: (connection: Connection) => Effect.Effect<Session.Session>
  /** A session for a login being linked (before a connection is stored). */
  readonly draftSession: (options: {
    readonly key: string
    readonly provider: ProviderName.ProviderName
    readonly state: ProviderName.UsState
    readonly sandbox: boolean
    readonly credentials: Readonly<Record<string, string>>
  }) => Session.Session
  /**
   * Sandbox connections' state, shared through the database by every process: reads and writes
   * run on a world current with the stored log, faults and resets (`SandboxState`).
   */
  readonly state: SandboxState.Service
  /** The upstream deadline of a `/v1` request (`TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS`). */
  readonly deadline: Duration.Duration
  /**
   * Runs a provider call within the request's upstream deadline (`deadline` from now, or the
   * earlier one in force: wrap a request that makes several calls in `Deadline.withBudget(deadline)`
   * so that they share one). The adapters see it; a port call still running then fails with
   * `ProviderTimeout` (each call of this service's ports is cut at it; one the sandbox's read cache
   * answers is not raced).
   */
  readonly upstream: <A, E>(
    provider: string,
    call: Effect.Effect<A, E>
  ) => Effect.Effect<A, E | ProviderError.ProviderTimeout>
  /**
   * The ids of the connection's facilities as its provider reports them (every page of
   * `listFacilities`, within the request's deadline; a sandbox world current with the database),
   * kept per connection and login for `FACILITY_IDS_TTL`.
   */
  readonly facilityIds: (
    connection: Connection
  ) => Effect.Effect<ReadonlySet<string>, ProviderError.ProviderError>
  /** The facility list `facilityIds` keeps for this connection and login, while fresh; nothing is asked. */
  readonly cachedFacilityIds: (connection: Connection) => ReadonlySet<string> | undefined
}

/**
 * How long a connection's facility list is kept before the provider is asked again.
 *
 * @since 0.1.0
 * @category constants
 */
export const FACILITY_IDS_TTL = Duration.minutes(1)

/**
 * @since 0.1.0
 * @category tags
 */
export class Providers extends Context.Tag("Services/Providers")<Providers, Service>() {}

/** In a sandbox login, the part the user typed, then `~` and the connection id (one world per connection). */
const sandboxCredentials = (
  provider: string,
  credentials: Readonly<Record<string, string>>,
  key: string
): Readonly<Record<string, string>> => {
  const installed = Registry.installed.get(provider)
  return installed === undefined ? credentials : installed.logins.scope(credentials, key)
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(
  Providers,
  Effect.gen(function*() {
    const sandboxLog = yield* SandboxLog
    const crypto = yield* Crypto
    const governor = DatabaseGovernor.make(yield* UpstreamBuckets)
    const seed = yield* AppConfig.sandboxSeed
    const size = yield* AppConfig.sandboxSize
    const deadline = yield* AppConfig.upstreamDeadline
    // Where each provider's production connections go, per state (configuration over the descriptor).
    const upstreamBaseUrl = new Map<string, (state: string) => string | undefined>()
    for (const module of Catalog.modules) {
      const descriptor = module.descriptor
      upstreamBaseUrl.set(
        descriptor.name,
        yield* Effect.orDie(AppConfig.upstreamBaseUrls(descriptor.name, Object.keys(descriptor.capabilities)))
      )
    }
    const clock = yield* Effect.clock
    const now = () => clock.unsafeCurrentTimeMillis()
    const day = 86_400_000
    // The sandbox's reference date: the start of the day the process started.
    const sandbox = new Sandbox.Sandbox({
      providers: Registry.installed,
      seed,
      referenceDate: new Date(Math.floor(now() / day) * day).toISOString(),
      now,
      size
    })
    const inProcess = SandboxServer.layerHttpClient(SandboxServer.makeHandler(sandbox))

    // With the request log on, each upstream call of a /v1 request is recorded, with the provider,
    // state and method of the port call that sent it (`RequestLogCapture.ts`).
    const logged = Option.isSome(yield* Effect.serviceOption(RequestLogCapture.Capture))
    const recorded = (http: Layer.Layer<HttpClient.HttpClient>, module: Catalog.Entry) =>
      logged
        ? Layer.effect(
          HttpClient.HttpClient,
          Effect.map(HttpClient.HttpClient, (client) =>
            RequestLogCapture.recording(client, module.descriptor.name, module.upstreamErrorCode, now))
        ).pipe(Layer.provide(http))
        : http
    // Every installed provider's port, built from its module value (the one registration list),
    // over an HttpClient and a governor.
    const portsWith = <E>(
      http: Layer.Layer<HttpClient.HttpClient>,
      governed: UpstreamGovernor.Service,
      build: (module: Catalog.Entry) => Effect.Effect<
        ProviderPort.Service,
        E,
        HttpClient.HttpClient | Scope.Scope
      >
    ) =>
      Effect.all(Catalog.modules.map((module) => Effect.provide(build(module), recorded(http, module)))).pipe(
        Effect.provideService(UpstreamGovernor.UpstreamGovernor, governed)
      )
    // How much of each port's output is validated (ADR 0031): a sandbox connection's answers whole,
    // a production connection's on a sample unless configured otherwise. Set on the port's own calls,
    // under the deadline's cut, the metrics, the request log and the read cache.
    const productionCheck = yield* Effect.orDie(AppConfig.productionOutputCheck)
    const checking = (check: ProviderPort.OutputCheck) => (ports: ReadonlyArray<ProviderPort.Service>) =>
      ports.map((port) => PortCalls.wrap(port, (_call, effect) => ProviderPort.withOutputCheck(effect, check)))
    // The in-process emulator needs no pacing or backoff: it answers at once and never rate limits.
    // Which world a sandbox session reaches, for the read cache (sessions come from `session`).
    const worldOfSession = new WeakMap<Session.Session, string>()
    const readCache = new Lru<unknown>(yield* AppConfig.sandboxCacheEntries)
    const cached = (ports: ReadonlyArray<ProviderPort.Service>) =>
      ports.map((port) => ReadCache.wrap(port, sandbox, readCache, (s) => worldOfSession.get(s)))
    // Each call is cut at the request's deadline (`upstream`), under the read cache: a kept answer
    // is not raced. Outside a request (the sync's calls) nothing is cut.
    const timeoutOf = (provider: string, operation: string) =>
      new ProviderError.ProviderTimeout({
        provider: provider as ProviderName.ProviderName,
        operation,
        timeout: deadline,
        message: `The state system (${provider}) did not answer within ${
          Duration.format(deadline)
        }, retries included; try again later`
      })
    const cutAtDeadline = (ports: ReadonlyArray<ProviderPort.Service>) =>
      ports.map((port) =>
        PortCalls.wrap(port, (call, effect) => Deadline.cut(effect, () => timeoutOf(call.provider, call.operation)))
      )
    // Counted when the metrics are on (`Metrics.ts`): port calls, 429s, governor waits, skipped rows.
    const counted = Metrics.isOn()
    const measured = (ports: ReadonlyArray<ProviderPort.Service>) => {
      const counting = counted ? ports.map(Metrics.port) : ports
      // the call running, which the governor's 429 count and the request log's upstream calls read
      return counted || logged ? counting.map(PortCalls.track) : counting
    }
    // The read cache outermost: an answer it keeps reached no state system, so it is neither
    // counted as an upstream request, nor tracked as a port call, nor raced against the deadline.
    const sandboxPorts = ProviderPorts.make(
      cached(measured(cutAtDeadline(
        checking("all")(
          yield* portsWith(
            inProcess,
            counted ? Metrics.governor(UpstreamGovernor.unlimited, false) : UpstreamGovernor.unlimited,
            (module) => module.sandbox
          )
        )
      )))
    )
    const productionPorts = ProviderPorts.make(
      measured(cutAtDeadline(
        checking(productionCheck)(
          yield* Effect.orDie(
            portsWith(
              FetchHttpClient.layer,
              counted ? Metrics.governor(governor) : governor,
              (module) => module.production
            )
          )
        )
      ))
    )

    // The world a stored sandbox login opens (as its emulator keys it).
    const loginOf = (connection: Connection, credentials: Readonly<Record<string, string>>) => {
      const scoped = sandboxCredentials(connection.provider, credentials, connection.id)
      const installed = Registry.installed.get(connection.provider)
      return (installed === undefined ? undefined : Logins.worldLogin(installed.logins, scoped)) ??
        JSON.stringify(scoped)
    }

    const draftSession: Service["draftSession"] = (options) =>
      Sessions.make({
        key: options.key,
        provider: options.provider,
        state: options.state,
        environment: options.sandbox ? "sandbox" : "production",
        credentials: options.sandbox
          ? sandboxCredentials(options.provider, options.credentials, options.key)
          : options.credentials,
        baseUrl: options.sandbox
          ? SandboxServer.baseUrl(SandboxServer.IN_PROCESS_ORIGIN, options.provider, options.state)
          : upstreamBaseUrl.get(options.provider)?.(options.state)
      })

    // Each connection's session and, for a sandbox login, the world it opens: made once per stored
    // login (its ciphertext: a relink or a re-encryption stores a new one, a disconnect erases it)
    // and checked against the row every request reads, so that a change made on another node is
    // seen by the next request (DECISIONS "Several API nodes").
    const bindings = new Lru<{
      readonly credentials: string | null
      readonly keyId: string | null
      readonly provider: string
      readonly state: string
      readonly sandbox: boolean
      readonly session: Session.Session
      /** The world login of a sandbox connection's stored login (as its emulator keys it). */
      readonly login: string | undefined
    }>(10_000)
    const bind = (connection: Connection) => {
      const known = bindings.get(connection.id)
      if (
        known !== undefined && known.credentials === connection.credentials && known.keyId === connection.key_id &&
        known.provider === connection.provider && known.state === connection.state &&
        known.sandbox === connection.is_sandbox
      ) return known
      const credentials: Readonly<Record<string, string>> =
        connection.credentials === null || connection.key_id === null
          ? {}
          : JSON.parse(crypto.decrypt(connection.credentials, connection.key_id))
      const session = draftSession({
        key: connection.id,
        provider: connection.provider as ProviderName.ProviderName,
        state: connection.state as ProviderName.UsState,
        sandbox: connection.is_sandbox,
        credentials
      })
      const login = connection.is_sandbox ? loginOf(connection, credentials) : undefined
      if (login !== undefined && connection.credentials !== null) {
        worldOfSession.set(session, Sandbox.keyOf(session.provider, session.state, login))
      }
      const binding = {
        credentials: connection.credentials,
        keyId: connection.key_id,
        provider: connection.provider,
        state: connection.state,
        sandbox: connection.is_sandbox,
        session,
        login
      }
      bindings.set(connection.id, binding)
      return binding
    }

    // Each connection's facility ids, per login (a relink may reach other facilities).
    const rosters = new Lru<{ readonly login: string | null; readonly at: number; readonly ids: ReadonlySet<string> }>(
      10_000
    )
    const rosterTtl = Duration.toMillis(FACILITY_IDS_TTL)
    const cachedFacilityIds: Service["cachedFacilityIds"] = (connection) => {
      const known = rosters.get(connection.id)
      return known !== undefined && known.login === connection.credentials && now() - known.at < rosterTtl
        ? known.ids
        : undefined
    }
    const facilityIds: Service["facilityIds"] = (connection) =>
      Effect.gen(function*() {
        const known = cachedFacilityIds(connection)
        if (known !== undefined) return known
        const port = yield* service.port(connection.provider, connection.is_sandbox)
        if (Option.isNone(port)) return new Set<string>()
        const session = yield* service.session(connection)
        const listAll = Effect.gen(function*() {
          const ids = new Set<string>()
          for (let page = 1;; page++) {
            const read = yield* port.value.listFacilities(session, { page, per_page: 100 })
            for (const f of read.items) ids.add(f.id)
            if (read.items.length === 0 || page * 100 >= read.pagination.total) return ids
          }
        })
        const upstream = service.upstream(connection.provider, listAll)
        const ids = yield* (connection.is_sandbox ? service.state.read(connection, upstream) : upstream)
        rosters.set(connection.id, { login: connection.credentials, at: now(), ids })
        return ids
      })

    const service: Service = {
      facilityIds,
      cachedFacilityIds,
      sandbox,
      descriptors: sandboxPorts.descriptors,
      port: (provider, isSandbox) => Effect.option((isSandbox ? sandboxPorts : productionPorts).get(provider)),
      session: (connection) => Effect.sync(() => bind(connection).session),
      draftSession,
      state: SandboxState.make({
        sandboxLog,
        sandbox,
        // only asked of a sandbox connection with a stored login
        loginOf: (connection) => bind(connection).login!
      }),
      deadline,
      // the deadline, as a hard stop for the port calls made under it (`cutAtDeadline`)
      upstream: (provider, call) =>
        Deadline.enforce(deadline)(call).pipe(
          // the adapter, seeing the deadline, may time out first: either way a ProviderTimeout
          counted ? Effect.tapError(Metrics.recordDeadlineExceeded(provider)) : identity
        )
    }
    return service
  })
)
