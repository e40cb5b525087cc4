import { HttpClient, HttpClientRequest } from "@effect/platform"
import type { HttpClientResponse } from "@effect/platform"
import { Bootstrap, Http, Server } from "@tracebridge/http"
import { Effect, Layer, Option } from "effect"
import { Accounts } from "../../src/persistence/Accounts.js"
import { ConnectionStore } from "../../src/persistence/ConnectionStore.js"
import { SandboxLog } from "../../src/persistence/SandboxLog.js"
import * as Crypto from "../../src/services/Crypto.js"
import * as TestDatabase from "./TestDatabase.js"

/** The whole service on a test server, on SQLite in a temporary file. */
export const TestApp = Http.HttpLive.pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

export interface Json {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: any
}

const read = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(response.text, (text): Json => ({
    status: response.status,
    headers: response.headers,
    body: text === "" ? null : JSON.parse(text)
  }))

/** Sends a request to the test server and reads the JSON answer. */
export const call = (
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  options: {
    readonly token?: string
    readonly json?: unknown
    readonly form?: Record<string, string>
    readonly raw?: string
    readonly contentType?: string
    readonly headers?: Readonly<Record<string, string>>
  } = {}
) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = method === "GET"
      ? HttpClientRequest.get(path)
      : method === "POST"
      ? HttpClientRequest.post(path)
      : method === "PUT"
      ? HttpClientRequest.put(path)
      : method === "PATCH"
      ? HttpClientRequest.patch(path)
      : HttpClientRequest.del(path)
    if (options.token !== undefined) request = HttpClientRequest.bearerToken(request, options.token)
    if (options.headers !== undefined) request = HttpClientRequest.setHeaders(request, options.headers)
    if (options.json !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, options.json)
    if (options.form !== undefined) request = HttpClientRequest.bodyUrlParams(request, options.form)
    if (options.raw !== undefined) {
      request = HttpClientRequest.bodyText(request, options.raw, options.contentType ?? "application/json")
    }
    return yield* Effect.flatMap(client.execute(request), read)
  }).pipe(Effect.scoped)

/** A sandbox organisation and client, then an access token. */
export const signIn = Effect.gen(function*() {
  const created = yield* Bootstrap.ensureSandboxClient
  const credentials = Option.getOrThrow(created)
  const token = yield* call("POST", "/v1/oauth/token", {
    json: { grant_type: "client_credentials", ...credentials }
  })
  return { ...credentials, access: token.body.access_token as string, refresh: token.body.refresh_token as string }
})

/** A second organisation with its own client and token. */
export const otherOrganisation = Effect.gen(function*() {
  const organisation = yield* Bootstrap.createOrganisation("Other organisation")
  const client = yield* Bootstrap.createClient(organisation.id)
  const token = yield* call("POST", "/v1/oauth/token", { json: { grant_type: "client_credentials", ...client } })
  return token.body.access_token as string
})

/** A production organisation with its own client, and an access token with the production scope. */
export const productionSignIn = Effect.gen(function*() {
  const organisation = yield* Bootstrap.createOrganisation("Production org", "production")
  const client = yield* Bootstrap.createClient(organisation.id)
  const token = yield* call("POST", "/v1/oauth/token", {
    json: { grant_type: "client_credentials", ...client, scope: "production" }
  })
  return { organisation, access: token.body.access_token as string }
})

/** The Connect widget's flow for a login: a link token, the page's session, and the submit's answer. */
export const submitLogin = (
  access: string,
  login: { readonly provider: string; readonly state: string; readonly credentials: Record<string, string> }
) =>
  Effect.gen(function*() {
    const link = yield* call("POST", "/v1/link/token/create", { token: access, json: {} })
    const linkToken = link.body.data.link_token as string
    const session = yield* call("GET", `/connect/session?link_token=${encodeURIComponent(linkToken)}`)
    return yield* call("POST", "/connect/submit", {
      json: { link_token: linkToken, link_session_id: session.body.data.link_session_id, ...login }
    })
  })

/** Links a sandbox connection and exchanges its public token. */
export const linkSandbox = (
  access: string,
  provider: "provider_a" | "provider_b" = "provider_a",
  state = provider === "provider_a" ? "CO" : "HI"
) =>
  Effect.gen(function*() {
    const created = yield* call("POST", "/v1/sandbox/public_token/create", { token: access, json: { provider, state } })
    const exchanged = yield* call("POST", "/v1/link/token/exchange", {
      token: access,
      json: { public_token: created.body.data.public_token }
    })
    return exchanged.body.data as { connection_id: string; connection_token?: string; status: string }
  })

/**
 * A production provider_a login (CO, `user_key`) linked through Connect and exchanged, as an end
 * user and the integrator do: the connection's id and status as the exchange answers them. Dies
 * with the answer when the submit or the exchange is not 200.
 */
export const linkProduction = (access: string, user_key = "user_good") =>
  Effect.gen(function*() {
    const submitted = yield* submitLogin(access, { provider: "provider_a", state: "CO", credentials: { user_key } })
    if (submitted.status !== 200) return yield* Effect.dieMessage(`submit: ${JSON.stringify(submitted.body)}`)
    const exchanged = yield* call("POST", "/v1/link/token/exchange", {
      token: access,
      json: { public_token: submitted.body.data.public_token }
    })
    if (exchanged.status !== 200) return yield* Effect.dieMessage(`exchange: ${JSON.stringify(exchanged.body)}`)
    return {
      connectionId: exchanged.body.data.connection_id as string,
      status: exchanged.body.data.status as string
    }
  })

/** Waits (up to `seconds`, real time) until the connection's status is `status`: the last one seen. */
export const awaitStatus = (access: string, connectionId: string, status: string, seconds = 60) =>
  Effect.gen(function*() {
    let seen = ""
    for (let i = 0; i < seconds * 10 && seen !== status; i++) {
      if (i > 0) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      seen = (yield* call("GET", `/v1/connections/${connectionId}`, { token: access })).body.data.status
    }
    return seen
  })

/** The organisations' store, for tests that read or change organisations directly. */
export { Accounts }

/** A connection's stored sandbox change log (none for an unknown connection). */
export const storedChanges = (connectionId: string) =>
  Effect.flatMap(
    SandboxLog,
    (sandboxLog) =>
      Effect.map(sandboxLog.sandboxLog(connectionId, 0), (log) => Option.isSome(log) ? log.value.changes : [])
  )

/** Stores a production connection of an organisation directly (no state system to link to in tests). */
export const insertProductionConnection = (organisationId: string, id: string) =>
  Effect.flatMap(ConnectionStore, (connectionStore) =>
    connectionStore.insertConnection({
      id,
      organisation_id: organisationId,
      provider: "provider_a",
      state: "CO",
      status: "active",
      is_sandbox: false,
      external_id: null,
      credentials: null,
      key_id: null,
      token_issued: false,
      created_at: 0,
      updated_at: 0,
      sandbox_version: 0,
      sandbox_fault: null
    }))
