/**
 * The `tracebridge` command (`npx tracebridge` in a clone, after `npm install`), on `@effect/cli`.
 * Every command takes `--json`. Credentials: `TRACEBRIDGE_CLIENT_ID`/`_SECRET` (and
 * `TRACEBRIDGE_API_URL`) or `tracebridge login` (`Credentials.ts`). No command prints a client
 * secret or a token.
 *
 * @since 0.1.0
 */
import { Args, Command, Options, Prompt } from "@effect/cli"
import { FetchHttpClient } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { operations } from "@tracebridge/client"
import { Tracebridge } from "@tracebridge/client"
import { McpServer } from "@tracebridge/mcp"
import { Console, Duration, Effect, HashMap, Layer, Option, Redacted } from "effect"
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Credentials from "./Credentials.js"
import * as DashboardSession from "./DashboardSession.js"
import * as Listen from "./Listen.js"
import * as Logs from "./Logs.js"

type PublicToken = operations["createSandboxPublicToken"]["requestBody"]["content"]["application/json"]
type Simulate = operations["simulateScenario"]["requestBody"]["content"]["application/json"]
type EventsQuery = NonNullable<operations["listEvents"]["parameters"]["query"]>

const json = Options.boolean("json").pipe(Options.withDescription("Print JSON, one object per line"))

const print = (line: string) => Console.log(line)

/** The SDK for these credentials. */
const sdkOf = (credentials: Credentials.Credentials) =>
  new Tracebridge({
    baseUrl: credentials.apiUrl,
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret
  })

/** An SDK call; its failure as one line (the API's error code and message). */
const api = <A>(what: string, call: () => Promise<A>) =>
  Effect.tryPromise({
    try: call,
    catch: (error) => {
      const body = (error as { body?: { error?: { code?: string; message?: string } } }).body
      const detail = body?.error?.message !== undefined
        ? `${body.error.code ?? "error"}: ${body.error.message}`
        : String(error instanceof Error ? error.message : error)
      return new Credentials.CliError(`${what}: ${detail}`)
    }
  })

const login = Command.make(
  "login",
  {
    clientId: Options.text("client-id").pipe(
      Options.optional,
      Options.withDescription("The API client's id (tb_client_…)")
    ),
    clientSecret: Options.redacted("client-secret").pipe(
      Options.optional,
      Options.withDescription("The API client's secret; kept in the config file, readable by you only")
    ),
    email: Options.text("email").pipe(
      Options.optional,
      Options.withDescription("Sign in to the dashboard as this member instead (for `logs tail`)")
    ),
    password: Options.redacted("password").pipe(
      Options.optional,
      Options.withDescription("With --email: the password (default: $TRACEBRIDGE_DASHBOARD_PASSWORD, else asked)")
    ),
    totpCode: Options.text("totp-code").pipe(
      Options.optional,
      Options.withDescription("With --email: the current code of your authenticator, when two-factor is on")
    ),
    apiUrl: Options.text("api-url").pipe(
      Options.withDefault(Credentials.DEFAULT_API_URL),
      Options.withDescription("The API's origin")
    ),
    json
  },
  ({ apiUrl, clientId, clientSecret, email, json, password, totpCode }) =>
    Effect.gen(function*() {
      const origin = apiUrl.replace(/\/+$/, "")
      if (Option.isSome(email)) {
        const secret = Option.isSome(password)
          ? Redacted.value(password.value)
          : process.env.TRACEBRIDGE_DASHBOARD_PASSWORD ?? Redacted.value(
            yield* Prompt.password({ message: `Dashboard password for ${email.value}` }).pipe(
              Effect.mapError(() => new Credentials.CliError("no password given"))
            )
          )
        const session = yield* DashboardSession.signIn(origin, {
          email: email.value,
          password: secret,
          totpCode: Option.getOrUndefined(totpCode)
        })
        const file = yield* DashboardSession.save(session)
        return yield* print(
          json
            ? JSON.stringify({
              email: session.email,
              organisation_id: session.organisationId,
              role: session.role,
              api_url: origin,
              expires_at: new Date(session.expiresAt).toISOString(),
              session_file: file
            })
            : `Signed in to the dashboard as ${session.email} (${session.role} of ${session.organisationId}) until ${
              new Date(session.expiresAt).toISOString()
            }; saved in ${file} (readable by you only)`
        )
      }
      if (Option.isNone(clientId) || Option.isNone(clientSecret)) {
        return yield* Effect.fail(
          new Credentials.CliError(
            "give --client-id and --client-secret (an API client), or --email (the dashboard, for logs tail)"
          )
        )
      }
      const credentials = {
        apiUrl: origin,
        clientId: clientId.value,
        clientSecret: Redacted.value(clientSecret.value)
      }
      // checked before it is saved: a wrong secret is said now, not at the next command
      yield* api("sign-in failed", () => sdkOf(credentials).accessToken())
      const file = yield* Credentials.save(credentials)
      yield* print(
        json
          ? JSON.stringify({ client_id: credentials.clientId, api_url: credentials.apiUrl, config_file: file })
          : `Signed in as ${credentials.clientId} at ${credentials.apiUrl}; saved in ${file} (readable by you only)`
      )
    })
).pipe(Command.withDescription("Save the API client's credentials (or, with --email, a dashboard session)"))

const logsTail = Command.make(
  "tail",
  {
    status: Options.choice("status", ["2xx", "4xx", "5xx"]).pipe(
      Options.optional,
      Options.withDescription("Only requests answered with this status class")
    ),
    route: Options.text("route").pipe(
      Options.optional,
      Options.withDescription("Only this route template, e.g. /v1/connections/:connection_id")
    ),
    connection: Options.text("connection").pipe(Options.optional, Options.withDescription("Only this connection")),
    interval: Options.integer("interval").pipe(
      Options.withDefault(2),
      Options.withDescription("Seconds between two looks at the log (1–60)")
    ),
    json
  },
  ({ connection, interval, json, route, status }) =>
    Effect.gen(function*() {
      const session = yield* DashboardSession.resolve()
      return yield* Logs.tail(
        session,
        {
          status: Option.getOrUndefined(status),
          route: Option.getOrUndefined(route),
          connection: Option.getOrUndefined(connection)
        },
        { json, interval: Duration.seconds(Math.min(60, Math.max(1, interval))) },
        print
      )
    })
).pipe(Command.withDescription("Follow the organisation's request log, with each request's upstream calls"))

const logs = Command.make("logs").pipe(
  Command.withDescription("The organisation's request log (the dashboard's)"),
  Command.withSubcommands([logsTail])
)

const listen = Command.make(
  "listen",
  {
    forwardTo: Options.text("forward-to").pipe(
      Options.withDescription("The local URL that receives each event, signed as a webhook delivery")
    ),
    events: Options.text("events").pipe(
      Options.optional,
      Options.withDescription("Only these event types, comma-separated")
    ),
    connection: Options.text("connection").pipe(Options.optional, Options.withDescription("Only this connection")),
    json
  },
  ({ connection, events, forwardTo, json }) =>
    Effect.gen(function*() {
      const credentials = yield* Credentials.resolve()
      return yield* Listen.run(credentials, {
        forwardTo,
        types: Option.getOrUndefined(Option.map(events, (e) => e.split(",").map((t) => t.trim()).filter(Boolean))),
        connectionId: Option.getOrUndefined(connection),
        json
      }, print)
    })
).pipe(Command.withDescription("Forward the organisation's events to a local URL, without a public URL"))

const trigger = Command.make(
  "trigger",
  {
    scenario: Args.text({ name: "scenario" }).pipe(
      Args.withDescription("transfer_arrived, transfer_completed, lab_result_received, connection_login_required, …")
    ),
    connection: Options.text("connection").pipe(
      Options.optional,
      Options.withDescription("The sandbox connection (default: a new one)")
    ),
    provider: Options.text("provider").pipe(
      Options.withDefault("provider_a"),
      Options.withDescription("The new connection's provider")
    ),
    state: Options.text("state").pipe(Options.withDefault("CO"), Options.withDescription("The new connection's state")),
    params: Options.keyValueMap("param").pipe(
      Options.optional,
      Options.withDescription("A scenario parameter, key=value (repeat it)")
    ),
    json
  },
  ({ connection, json, params, provider, scenario, state }) =>
    Effect.gen(function*() {
      const sdk = sdkOf(yield* Credentials.resolve())
      const connectionId = Option.isSome(connection) ? connection.value : yield* Effect.gen(function*() {
        const created = yield* api("making a sandbox connection", () =>
          sdk.post("/v1/sandbox/public_token/create", {
            // the API checks both against its providers and their states
            body: { provider, state: state as NonNullable<PublicToken["state"]> }
          }))
        const exchanged = yield* api("making a sandbox connection", () =>
          sdk.post("/v1/link/token/exchange", {
            body: { public_token: (created as { data: { public_token: string } }).data.public_token }
          }))
        return (exchanged as { data: { connection_id: string } }).data.connection_id
      })
      const body: Simulate = {
        // the API refuses an unknown scenario with the list of the known ones
        scenario: scenario as Simulate["scenario"],
        params: Option.match(params, {
          onNone: () => ({}),
          onSome: (map) => Object.fromEntries(HashMap.toEntries(map))
        })
      }
      const answer = yield* api("simulate", () =>
        sdk.post("/v1/sandbox/{connection_id}/simulate", {
          params: { path: { connection_id: connectionId } },
          body
        }))
      const data = (answer as { data: { event: { id: string; type: string } | null; deliveries: number } }).data
      yield* print(
        json
          ? JSON.stringify({ connection_id: connectionId, scenario, event: data.event, deliveries: data.deliveries })
          : data.event === null
          ? `${scenario} on ${connectionId}: done (no event)`
          : `${scenario} on ${connectionId}: ${data.event.type} ${data.event.id}, queued for ${data.deliveries} endpoint(s)`
      )
    })
).pipe(Command.withDescription("Run a sandbox scenario (simulate), on a new sandbox connection unless one is given"))

const eventsList = Command.make(
  "list",
  {
    failed: Options.boolean("failed").pipe(
      Options.withDescription("Only events an endpoint has not received (delivery_success=false)")
    ),
    type: Options.text("type").pipe(Options.optional, Options.withDescription("Only this event type")),
    connection: Options.text("connection").pipe(Options.optional, Options.withDescription("Only this connection")),
    limit: Options.integer("limit").pipe(Options.withDefault(25), Options.withDescription("At most this many (1–100)")),
    json
  },
  ({ connection, failed, json, limit, type }) =>
    Effect.gen(function*() {
      const sdk = sdkOf(yield* Credentials.resolve())
      const query: EventsQuery = {
        per_page: Math.min(100, Math.max(1, limit)),
        ...(failed ? { delivery_success: "false" } : {}),
        ...(Option.isSome(type) ? { type: type.value as NonNullable<EventsQuery["type"]> } : {}),
        ...(Option.isSome(connection) ? { connection_id: connection.value } : {})
      }
      const answer = yield* api("listing events", () => sdk.get("/v1/events", { params: { query } }))
      const events = (answer as {
        data: ReadonlyArray<
          { id: string; type: string; created_at: string; connection_id: string; delivery: { status: string } }
        >
      }).data
      for (const event of events) {
        yield* print(
          json
            ? JSON.stringify(event)
            : `${event.created_at}  ${event.type.padEnd(26)} ${event.id}  ${
              event.delivery.status.padEnd(9)
            } ${event.connection_id}`
        )
      }
      if (!json && events.length === 0) yield* print("No events.")
    })
).pipe(Command.withDescription("List events, newest first"))

const eventsResend = Command.make(
  "resend",
  {
    id: Args.text({ name: "event_id" }),
    webhook: Options.text("webhook").pipe(
      Options.optional,
      Options.withDescription("Only to this endpoint (default: every endpoint it was queued for)")
    ),
    json
  },
  ({ id, json, webhook }) =>
    Effect.gen(function*() {
      const sdk = sdkOf(yield* Credentials.resolve())
      const answer = yield* api("reading the event", () =>
        sdk.get("/v1/events/{event_id}", { params: { path: { event_id: id } } }))
      const endpoints = (answer as {
        data: { delivery: { endpoints: ReadonlyArray<{ webhook_id: string; delivery_id: string }> } }
      }).data.delivery.endpoints.filter((e) =>
        Option.isNone(webhook) || e.webhook_id === webhook.value
      )
      if (endpoints.length === 0) {
        return yield* Effect.fail(new Credentials.CliError(`event ${id} has no delivery to resend`))
      }
      for (const endpoint of endpoints) {
        yield* api("resending", () =>
          sdk.post("/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry", {
            params: { path: { webhook_id: endpoint.webhook_id, delivery_id: endpoint.delivery_id } }
          }))
        yield* print(
          json
            ? JSON.stringify({ event_id: id, webhook_id: endpoint.webhook_id, delivery_id: endpoint.delivery_id })
            : `Resending ${id} to ${endpoint.webhook_id} (delivery ${endpoint.delivery_id})`
        )
      }
    })
).pipe(Command.withDescription("Send an event's deliveries again"))

const events = Command.make("events").pipe(
  Command.withDescription("The events the organisation's webhooks were sent"),
  Command.withSubcommands([eventsList, eventsResend])
)

/** The sandbox package's checked-in launcher (its `bin`), found from the package's entry point. */
const sandboxBin = () =>
  join(dirname(fileURLToPath(import.meta.resolve("@tracebridge/sandbox"))), "..", "bin", "tracebridge-sandbox.mjs")

const sandboxStart = Command.make(
  "start",
  {
    json: Options.boolean("json").pipe(
      Options.withDescription("Once listening, print one JSON line (origin, base URLs, control routes), not the banner")
    ),
    args: Args.text({ name: "arg" }).pipe(
      Args.repeated,
      Args.withDescription("Passed to tracebridge-sandbox (after --): --port, --seed, --size, …")
    )
  },
  ({ args, json }) =>
    Effect.async<void, Credentials.CliError>((resume) => {
      const child = spawn(process.execPath, [sandboxBin(), ...args, ...(json ? ["--json"] : [])], {
        stdio: "inherit"
      })
      const forward = (signal: NodeJS.Signals) => () => child.kill(signal)
      process.once("SIGINT", forward("SIGINT"))
      process.once("SIGTERM", forward("SIGTERM"))
      child.once("exit", (code) =>
        resume(
          code === 0 || code === null
            ? Effect.void
            : Effect.fail(new Credentials.CliError(`tracebridge-sandbox exited with ${code}`))
        ))
    })
).pipe(Command.withDescription("Run the standalone emulator of the state systems (tracebridge-sandbox)"))

const sandbox = Command.make("sandbox").pipe(
  Command.withDescription("The standalone sandbox"),
  Command.withSubcommands([sandboxStart])
)

const mcp = Command.make("mcp", {
  // every command takes --json; this one's output is the MCP protocol, JSON-RPC already
  json: Options.boolean("json").pipe(Options.withDescription("Accepted: stdio carries JSON-RPC messages only"))
}, () =>
  Effect.gen(function*() {
    const credentials = yield* Credentials.resolve()
    const sdk = sdkOf(credentials)
    // the token's scope says whether the organisation is on the production plan: no write tool then
    const scope = yield* api("sign-in failed", async () => {
      const response = await fetch(`${credentials.apiUrl}/v1/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          grant_type: "client_credentials",
          client_id: credentials.clientId,
          client_secret: credentials.clientSecret
        })
      })
      if (!response.ok) throw new Error(`the token endpoint answered ${response.status}`)
      return String(((await response.json()) as { scope?: unknown }).scope ?? "")
    })
    const server = McpServer.make(
      McpServer.fetchApi(credentials.apiUrl, () => sdk.accessToken()),
      { writes: !scope.split(" ").includes("production") }
    )
    yield* Effect.promise(() => server.connect(new StdioServerTransport()))
    // stdio is the session: the command runs until its input closes
    yield* Effect.async<void>((resume) => {
      process.stdin.once("end", () => resume(Effect.void))
      process.stdin.once("close", () => resume(Effect.void))
    })
  })).pipe(Command.withDescription("Serve the MCP tools over stdio, as this API client (for an MCP client's config)"))

const tracebridge = Command.make("tracebridge").pipe(
  Command.withDescription("Tracebridge from a terminal: local webhooks, sandbox scenarios, events, the request log"),
  Command.withSubcommands([login, listen, trigger, events, logs, sandbox, mcp])
)

const cli = Command.run(tracebridge, { name: "tracebridge", version: "0.1.0" })

cli(process.argv).pipe(
  Effect.catchIf(
    (error): error is Credentials.CliError => error instanceof Credentials.CliError,
    (error) =>
      Effect.zipRight(Console.error(`tracebridge: ${error.message}`), Effect.sync(() => (process.exitCode = 1)))
  ),
  Effect.provide(Layer.mergeAll(NodeContext.layer, FetchHttpClient.layer)),
  NodeRuntime.runMain({ disableErrorReporting: false })
)
