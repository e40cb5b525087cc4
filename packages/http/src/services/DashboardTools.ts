/**
 * The dashboard's Connect and Sandbox pages (issue #33, `docs/dashboard.md`):
 *
 * - **Connect:** the organisation's Connect defaults, the `client_name` and `logo_url` a link token
 *   gets when `POST /v1/link/token/create` names none (every role reads them; admin and up change
 *   them, audited `connect.settings_updated`), and a preview: a sandbox link token of the
 *   organisation made by `/v1`'s own code (`Connections.createLinkToken`), so the real widget
 *   opens with the defaults (developer and up, audited `connect.preview_started`).
 * - **Sandbox tools:** a sandbox connection made as `POST /v1/sandbox/public_token/create` then
 *   `POST /v1/link/token/exchange` make one, and on a sandbox connection the scenarios, reset and
 *   faults of `/v1/sandbox`, all through the same functions as `/v1` (`SandboxActions`), as the
 *   member's organisation (`Dashboard.actAs`): every role reads a fault, developer and up act, and
 *   every action is audited (`sandbox.connection_created`, `sandbox.simulated`, `sandbox.reset`,
 *   `sandbox.fault_set`, `sandbox.fault_cleared`).
 *
 * @since 0.1.0
 */
import type { DashboardApi } from "@tracebridge/api"
import { Fault, ProviderDescriptor, ScenarioName } from "@tracebridge/core"
import { Registry } from "@tracebridge/sandbox"
import type { Jobs, Polls, SyncStore } from "@tracebridge/sync"
import { Clock, Context, Effect, Layer, Option } from "effect"
import type * as Errors from "../Errors.js"
import { Accounts } from "../persistence/Accounts.js"
import type { Organisation } from "../persistence/Accounts.js"
import type { Connection } from "../persistence/ConnectionStore.js"
import { ConnectionStore } from "../persistence/ConnectionStore.js"
import type { Transactions } from "../persistence/Transactions.js"
import { Connections } from "./Connections.js"
import { Dashboard } from "./Dashboard.js"
import type { Failure } from "./Dashboard.js"
import { Providers } from "./Providers.js"
import * as SandboxActions from "./SandboxActions.js"
import type { Webhooks } from "./Webhooks.js"

type SessionInfo = DashboardApi.SessionInfo

/**
 * What a tools call may fail with: the dashboard's own errors and those of `/v1`'s code it runs.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolsFailure = Failure | Errors.HttpError

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly connectSettings: (session: SessionInfo) => Effect.Effect<typeof DashboardApi.ConnectSettings.Type>
  readonly updateConnectSettings: (
    session: SessionInfo,
    update: typeof DashboardApi.ConnectSettingsUpdate.Type
  ) => Effect.Effect<typeof DashboardApi.ConnectSettings.Type, ToolsFailure>
  readonly connectPreview: (
    session: SessionInfo
  ) => Effect.Effect<typeof DashboardApi.ConnectPreview.Type, ToolsFailure>
  readonly sandboxOptions: (session: SessionInfo) => Effect.Effect<typeof DashboardApi.SandboxOptions.Type>
  readonly createSandboxConnection: (
    session: SessionInfo,
    input: typeof DashboardApi.SandboxConnectionCreate.Type
  ) => Effect.Effect<typeof DashboardApi.ConnectionEntry.Type, ToolsFailure>
  readonly simulate: (
    session: SessionInfo,
    connectionId: string,
    input: typeof DashboardApi.SandboxSimulate.Type
  ) => Effect.Effect<typeof DashboardApi.SandboxSimulated.Type, ToolsFailure>
  readonly reset: (
    session: SessionInfo,
    connectionId: string
  ) => Effect.Effect<typeof DashboardApi.SandboxResetDone.Type, ToolsFailure>
  readonly fault: (
    session: SessionInfo,
    connectionId: string
  ) => Effect.Effect<typeof DashboardApi.SandboxFaultState.Type, ToolsFailure>
  readonly setFault: (
    session: SessionInfo,
    connectionId: string,
    fault: Fault.Fault
  ) => Effect.Effect<typeof DashboardApi.SandboxFaultState.Type, ToolsFailure>
  readonly clearFault: (
    session: SessionInfo,
    connectionId: string
  ) => Effect.Effect<typeof DashboardApi.SandboxFaultState.Type, ToolsFailure>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class DashboardTools extends Context.Tag("Services/DashboardTools")<DashboardTools, Service>() {}

/** The fault kinds `PUT /v1/sandbox/{id}/faults` takes, in the schema's order. */
const faultKinds: ReadonlyArray<string> = Fault.Fault.members.map((member) => member.fields.kind.literals[0])

/** A stored connection as the Connections page lists it. */
const entryOf = (c: Connection): typeof DashboardApi.ConnectionEntry.Type => ({
  id: c.id,
  external_id: c.external_id,
  provider: c.provider,
  state: c.state,
  status: c.status,
  is_sandbox: c.is_sandbox,
  created_at: c.created_at,
  updated_at: c.updated_at
})

const settingsOf = (organisation: Organisation): typeof DashboardApi.ConnectSettings.Type => ({
  client_name: organisation.connect_client_name ?? null,
  logo_url: organisation.connect_logo_url ?? null,
  organisation_name: organisation.name,
  updated_at: organisation.connect_updated_at ?? null
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(
  DashboardTools,
  Effect.gen(function*() {
    const dashboard = yield* Dashboard
    const accounts = yield* Accounts
    const connections = yield* Connections
    const connectionStore = yield* ConnectionStore
    const providers = yield* Providers
    // what `/v1`'s sandbox code runs on, as the `/v1` handlers have it
    const v1 = yield* Effect.context<
      Connections | Providers | Webhooks | Transactions | Polls.Polls | Jobs.Jobs | SyncStore.SyncStore
    >()
    const run = <A, E>(
      effect: Effect.Effect<
        SandboxActions.Answer<A>,
        E,
        Connections | Providers | Webhooks | Transactions | Polls.Polls | Jobs.Jobs | SyncStore.SyncStore
      >
    ) => Effect.map(Effect.provide(effect, v1), ({ data }) => data)

    const organisationOf = (id: string) =>
      Effect.flatMap(accounts.getOrganisation(id), (found) =>
        Option.isSome(found)
          ? Effect.succeed(found.value)
          : Effect.dieMessage(`a membership names organisation ${id}, which does not exist`))

    const service: Service = {
      connectSettings: (session) => Effect.map(organisationOf(session.organisation_id), settingsOf),

      updateConnectSettings: (session, update) =>
        Effect.gen(function*() {
          yield* dashboard.actAs(session, "admin", "Changing the Connect settings")
          const before = settingsOf(yield* organisationOf(session.organisation_id))
          const now = yield* Clock.currentTimeMillis
          yield* accounts.setConnectDefaults(session.organisation_id, update, now)
          yield* dashboard.record(session, "connect.settings_updated", session.organisation_id, {
            from: { client_name: before.client_name, logo_url: before.logo_url },
            to: { client_name: update.client_name, logo_url: update.logo_url }
          })
          return settingsOf(yield* organisationOf(session.organisation_id))
        }),

      connectPreview: (session) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(session, "developer", "Previewing Connect")
          // POST /v1/link/token/create's own code, naming no client_name or logo_url: the
          // organisation's defaults apply, in a sandbox link token whatever the plan
          const created = yield* connections.createLinkToken(principal, {}, { sandbox: true })
          const expiresAt = Date.parse(created.expires_at)
          yield* dashboard.record(session, "connect.preview_started", session.organisation_id, {
            expires_at: expiresAt
          })
          return {
            link_token: created.link_token,
            expires_at: expiresAt,
            url: `/connect?link_token=${encodeURIComponent(created.link_token)}`
          }
        }),

      sandboxOptions: () =>
        Effect.succeed({
          providers: providers.descriptors.map((d) => ({
            name: d.name,
            display_name: d.displayName,
            states: [...ProviderDescriptor.states(d)]
          })),
          logins: ["good", "bad", "locked"] as const,
          scenarios: ScenarioName.names,
          fault_kinds: faultKinds
        }),

      createSandboxConnection: (session, input) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(session, "developer", "Making a sandbox connection")
          const login = input.login ?? "good"
          // POST /v1/sandbox/public_token/create with the chosen test login, then the exchange
          const made = yield* run(SandboxActions.publicToken(principal, {
            provider: input.provider,
            state: input.state,
            credentials: Registry.installed.get(input.provider)?.logins[login] ?? {},
            external_id: input.external_id
          }))
          // the connection token of a first exchange is not kept: the dashboard never shows one
          const exchanged = yield* connections.exchange(principal, made.public_token)
          yield* dashboard.record(session, "sandbox.connection_created", exchanged.connection_id, {
            provider: input.provider,
            state: input.state,
            login
          })
          const stored = yield* connectionStore.getConnection(exchanged.connection_id)
          return entryOf(Option.getOrThrow(stored))
        }),

      simulate: (session, connectionId, input) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(session, "developer", "Running a sandbox scenario")
          const simulated = yield* run(SandboxActions.simulate(principal, connectionId, input))
          yield* dashboard.record(session, "sandbox.simulated", connectionId, {
            scenario: simulated.scenario,
            event_id: simulated.event?.id ?? null,
            deliveries: simulated.deliveries
          })
          return simulated
        }),

      reset: (session, connectionId) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(session, "developer", "Resetting a sandbox connection")
          const done = yield* run(SandboxActions.reset(principal, connectionId))
          yield* dashboard.record(session, "sandbox.reset", connectionId)
          return done
        }),

      fault: (session, connectionId) =>
        Effect.flatMap(
          dashboard.actAs(session, "viewer", "Reading a sandbox fault"),
          (principal) => run(SandboxActions.getFault(principal, connectionId))
        ),

      setFault: (session, connectionId, fault) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(session, "developer", "Setting a sandbox fault")
          const set = yield* run(SandboxActions.setFault(principal, connectionId, fault))
          yield* dashboard.record(session, "sandbox.fault_set", connectionId, { fault })
          return set
        }),

      clearFault: (session, connectionId) =>
        Effect.gen(function*() {
          const principal = yield* dashboard.actAs(session, "developer", "Clearing a sandbox fault")
          const cleared = yield* run(SandboxActions.clearFault(principal, connectionId))
          yield* dashboard.record(session, "sandbox.fault_cleared", connectionId)
          return cleared
        })
    }
    return service
  })
)
