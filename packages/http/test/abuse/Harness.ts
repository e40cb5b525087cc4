/**
 * The abuse suite's harness (issue #28): the built server (`dist/main.js`) started as an operator
 * starts it, on the embedded SQLite (`Abuse.test.ts`, in `npm test`) or on a fresh Postgres schema
 * (`Abuse.pg.test.ts`, in `npm run test:pg`), with a bootstrapped sandbox organisation and API
 * client, the operator CLI (`dist/cli.js`) against the same database, and a restart on the same
 * port and data. Every suite in `suites.ts` runs once per backend.
 */
import { Effect, Exit, Scope } from "effect"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { fileURLToPath } from "node:url"
import type { Answer, NodeSpec, RequestOptions, RunningNode } from "../support/Nodes.js"
import { nodeSpec, removeData, start } from "../support/Nodes.js"
import { freshSchema, testDatabaseUrl } from "../support/PgSchema.js"

/** Where the server keeps its data. */
export type Backend = "sqlite" | "postgres"

/** A suite of the abuse run: registers its `describe`/`it` blocks for one backend. */
export type Suite = (backend: Backend) => void

/** The built operator CLI. */
export const cliPath = fileURLToPath(new URL("../../dist/cli.js", import.meta.url))

/** What a CLI run printed, and its exit code (null when it was killed by its timeout). */
export interface CliRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** A running server of the abuse suite and what a test needs to talk to it. */
export interface AbuseServer {
  readonly backend: Backend
  readonly node: () => RunningNode
  readonly spec: NodeSpec
  readonly clientId: string
  readonly clientSecret: string
  /** The bootstrapped organisation's id. */
  readonly organisationId: string
  /** A fresh access token of the bootstrapped client. */
  readonly accessToken: () => Promise<string>
  readonly call: (
    method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    path: string,
    options?: RequestOptions
  ) => Promise<Answer>
  /**
   * A sandbox connection as README's first session makes one (link token, public token, exchange):
   * its id and its facilities' ids.
   */
  readonly linkSandbox: (token: string) => Promise<{ readonly connection: string; readonly facilities: Array<string> }>
  /** Runs the operator CLI against the server's database (asynchronously: the server keeps serving). */
  readonly cli: (args: ReadonlyArray<string>, timeoutMs?: number) => Promise<CliRun>
  /** SIGTERM and start again on the same port, data and database; resolves once it answers /healthz. */
  readonly restart: (env?: Readonly<Record<string, string>>) => Promise<RunningNode>
  /** Stops it (if running), drops its Postgres schema and removes its data folder. */
  readonly close: () => Promise<void>
}

export interface ServerOptions {
  /** More environment for the server and the CLI. */
  readonly env?: Readonly<Record<string, string>>
}

/** Starts the built server on `backend` with a bootstrapped sandbox organisation and client. */
export const startServer = async (
  backend: Backend,
  name: string,
  options: ServerOptions = {}
): Promise<AbuseServer> => {
  const scope = Effect.runSync(Scope.make())
  const database = backend === "postgres"
    ? await Effect.runPromise(Scope.extend(freshSchema(testDatabaseUrl("Abuse.pg.test.ts"), "abuse"), scope))
    : ""
  const clientId = `tb_client_abuse_${randomBytes(4).toString("hex")}`
  const clientSecret = `abuse-${randomBytes(16).toString("hex")}`
  const env: Record<string, string> = {
    DATABASE_URL: database,
    TRACEBRIDGE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    TRACEBRIDGE_CLIENT_ID: clientId,
    TRACEBRIDGE_CLIENT_SECRET: clientSecret,
    TRACEBRIDGE_WEBHOOK_TICK_MS: "100",
    TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS: "2",
    TRACEBRIDGE_RATE_LIMIT_RATE: "1000000",
    TRACEBRIDGE_RATE_LIMIT_BURST: "1000000",
    TRACEBRIDGE_ACCESS_LOG_EVERY: "0",
    ...options.env
  }
  let spec = await nodeSpec(`abuse-${name}`, env)
  let node: RunningNode
  try {
    node = await start(spec)
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    removeData(spec)
    throw error
  }
  const cli = (args: ReadonlyArray<string>, timeoutMs = 30_000) =>
    new Promise<CliRun>((resolve, reject) => {
      const child = spawn(process.execPath, [cliPath, ...args], {
        env: { ...process.env, TRACEBRIDGE_DATA_DIR: spec.dataDir, ...spec.env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
      child.once("error", reject)
      child.once("exit", (code) => {
        clearTimeout(timer)
        resolve({ code, stdout, stderr })
      })
    })
  const orgs = await cli(["list-orgs"])
  const organisationId = orgs.stdout.trim().split("\n")[0]?.split("\t")[0] ?? ""
  if (orgs.code !== 0 || !organisationId.startsWith("org_")) {
    await node.stop()
    throw new Error(`list-orgs failed (${orgs.code}): ${orgs.stderr}${orgs.stdout}`)
  }
  const accessToken = async () => {
    const answer = await node.call("POST", "/v1/oauth/token", {
      json: { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }
    })
    if (answer.status !== 200) throw new Error(`token: ${answer.status} ${answer.text}`)
    return (answer.body as { access_token: string }).access_token
  }
  const linkSandbox = async (token: string) => {
    const ok = (answer: Answer, what: string) => {
      if (answer.status !== 200) throw new Error(`${what}: ${answer.status} ${answer.text}`)
      return answer.body as { data: any }
    }
    ok(await node.call("POST", "/v1/link/token/create", { token, json: { external_id: "abuse" } }), "link token")
    const created = ok(
      await node.call("POST", "/v1/sandbox/public_token/create", {
        token,
        json: { provider: "provider_a", state: "CO" }
      }),
      "public token"
    )
    const exchanged = ok(
      await node.call("POST", "/v1/link/token/exchange", { token, json: { public_token: created.data.public_token } }),
      "exchange"
    )
    const connection = exchanged.data.connection_id as string
    const facilities = ok(await node.call("GET", `/v1/connections/${connection}/facilities`, { token }), "facilities")
    return { connection, facilities: (facilities.data as Array<{ id: string }>).map((f) => f.id) }
  }
  return {
    backend,
    node: () => node,
    linkSandbox,
    spec,
    clientId,
    clientSecret,
    organisationId,
    accessToken,
    call: (method, path, callOptions) => node.call(method, path, callOptions),
    cli,
    restart: async (more = {}) => {
      await node.stop()
      spec = { ...spec, env: { ...spec.env, ...more } }
      node = await start(spec)
      return node
    },
    close: async () => {
      await node.stop()
      await Effect.runPromise(Scope.close(scope, Exit.void))
      removeData(spec)
    }
  }
}
