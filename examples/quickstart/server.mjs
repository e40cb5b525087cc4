#!/usr/bin/env node
// The Tracebridge quickstart: a small integrator app, like Plaid's quickstart.
//
// The browser page asks this server for a link token, opens the Connect widget with it (the SDK
// comes from Tracebridge at /connect/sdk.js), and hands the public token back to this server, which
// exchanges it for a connection and then lists the connection's facilities and a page of packages.
// This server also subscribes to Tracebridge's webhooks and verifies every delivery's signature.
//
// The client secret, the access token, the webhook secret and the connection live only in this
// server's memory; the browser never sees them.
//
//   npm run quickstart                      embedded Tracebridge (a fresh sandbox in a temporary folder)
//   TRACEBRIDGE_URL=http://127.0.0.1:4000 TRACEBRIDGE_CLIENT_ID=… TRACEBRIDGE_CLIENT_SECRET=… \
//     npm run quickstart                    an already running Tracebridge
//
// Environment: QUICKSTART_PORT (3000), QUICKSTART_HOST (127.0.0.1), TRACEBRIDGE_URL,
// TRACEBRIDGE_CLIENT_ID, TRACEBRIDGE_CLIENT_SECRET, TRACEBRIDGE_PORT (embedded only; 4100).
import { verifyWebhook } from "@tracebridge/core/WebhookSignature"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const here = fileURLToPath(new URL(".", import.meta.url))
const host = process.env.QUICKSTART_HOST || "127.0.0.1"
const port = Number(process.env.QUICKSTART_PORT || 3000)
const self = `http://${host}:${port}`

// ---------------------------------------------------------------------------------------------
// Tracebridge: an existing one (TRACEBRIDGE_URL), or an embedded one started here.

const embedded = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "tracebridge-quickstart-"))
  const apiPort = Number(process.env.TRACEBRIDGE_PORT || 4100)
  const credentials = {
    id: `tb_client_quickstart_${randomBytes(6).toString("hex")}`,
    secret: `tb_secret_${randomBytes(24).toString("base64url")}`
  }
  const main = join(here, "..", "..", "packages", "http", "dist", "main.js")
  const child = spawn(process.execPath, [main], {
    env: {
      ...process.env,
      PORT: String(apiPort),
      HOST: "127.0.0.1",
      DATABASE_URL: "",
      TRACEBRIDGE_DATA_DIR: dataDir,
      TRACEBRIDGE_CLIENT_ID: credentials.id,
      TRACEBRIDGE_CLIENT_SECRET: credentials.secret
    },
    // Its start-up banner repeats the client credentials: keep it out of the terminal.
    stdio: ["ignore", "ignore", "inherit"]
  })
  const stop = () => {
    child.kill("SIGTERM")
    rmSync(dataDir, { recursive: true, force: true })
  }
  process.on("exit", stop)
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(0))
  child.on("exit", (code) => {
    if (code !== null && code !== 0) {
      console.error(`[quickstart] Tracebridge exited with ${code} (is port ${apiPort} free? set TRACEBRIDGE_PORT)`)
      process.exit(1)
    }
  })
  const url = `http://127.0.0.1:${apiPort}`
  for (let attempt = 0; attempt < 150; attempt++) {
    const up = await fetch(`${url}/healthz`).then((r) => r.ok, () => false)
    if (up) return { url, ...credentials }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`Tracebridge did not answer on ${url}/healthz`)
}

const configured = () => {
  const { TRACEBRIDGE_CLIENT_ID: id, TRACEBRIDGE_CLIENT_SECRET: secret, TRACEBRIDGE_URL: url } = process.env
  if (!id || !secret) {
    console.error("[quickstart] TRACEBRIDGE_URL needs TRACEBRIDGE_CLIENT_ID and TRACEBRIDGE_CLIENT_SECRET too")
    process.exit(1)
  }
  return { url: url.replace(/\/+$/, ""), id, secret }
}

const tracebridge = process.env.TRACEBRIDGE_URL ? configured() : await embedded()

// ---------------------------------------------------------------------------------------------
// The Tracebridge API, from the server side.

class ApiError extends Error {
  constructor(status, body, retryAfter) {
    super(body?.error?.message ?? `Tracebridge answered ${status}`)
    this.status = status
    this.body = body
    this.retryAfter = retryAfter
  }
}

let access = { token: "", expiresAt: 0 }
const accessToken = async () => {
  if (Date.now() < access.expiresAt - 30_000) return access.token
  const response = await fetch(`${tracebridge.url}/v1/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      grant_type: "client_credentials",
      client_id: tracebridge.id,
      client_secret: tracebridge.secret
    })
  })
  const body = await response.json()
  if (!response.ok) throw new ApiError(response.status, body)
  access = { token: body.access_token, expiresAt: Date.now() + body.expires_in * 1000 }
  return access.token
}

const api = async (method, path, json) => {
  const response = await fetch(`${tracebridge.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${await accessToken()}`,
      ...(json === undefined ? {} : { "content-type": "application/json" })
    },
    body: json === undefined ? undefined : JSON.stringify(json)
  })
  const body = await response.json()
  if (!response.ok) throw new ApiError(response.status, body, response.headers.get("retry-after"))
  return body
}

// ---------------------------------------------------------------------------------------------
// Webhooks: subscribe this server, and keep the verified deliveries to show on the page.

const webhookUrl = `${self}/webhooks`
let webhookSecret = null
const received = []

// A 503 (the server busy or starting) or a 429 is retried after its Retry-After, a few times.
const subscribe = async () => {
  for (let attempt = 1; ; attempt++) {
    try {
      const created = await api("POST", "/v1/webhooks", {
        url: webhookUrl,
        events: ["transfer.arrived", "transfer.completed", "lab_result.received"],
        description: "quickstart"
      })
      webhookSecret = created.data.secret
      console.log(`[quickstart] subscribed ${webhookUrl} to Tracebridge's webhooks`)
      return
    } catch (error) {
      const retryable = !(error instanceof ApiError) || error.status === 503 || error.status === 429
      if (!retryable || attempt === 5) {
        console.error(`[quickstart] could not subscribe to webhooks: ${error.message}`)
        return
      }
      const after = Number(error.retryAfter ?? 1)
      await new Promise((resolve) => setTimeout(resolve, Math.min(10, Math.max(1, after)) * 1000))
    }
  }
}

const onWebhook = async (raw, signature) => {
  if (webhookSecret === null) return { status: 503, body: { error: "not subscribed" } }
  try {
    const event = await verifyWebhook(raw, signature, [webhookSecret])
    received.unshift({ verified: true, id: event.id, type: event.type, created_at: event.created_at, data: event.data })
    received.length = Math.min(received.length, 20)
    return { status: 200, body: { received: true } }
  } catch (error) {
    console.error(`[quickstart] refused a webhook: ${error.message}`)
    return { status: 400, body: { error: error.reason ?? "invalid" } }
  }
}

// ---------------------------------------------------------------------------------------------
// This app's own routes.

let connectionId = null

const routes = {
  "POST /api/link_token": async () => {
    const created = await api("POST", "/v1/link/token/create", { external_id: "quickstart-user" })
    return { link_token: created.data.link_token, expires_at: created.data.expires_at }
  },
  "POST /api/update_token": async () => {
    if (connectionId === null) throw new ApiError(409, { error: { message: "No connection yet" } })
    const created = await api("POST", "/v1/link/token/create", { connection_id: connectionId })
    return { link_token: created.data.link_token }
  },
  "POST /api/exchange": async (body) => {
    const exchanged = await api("POST", "/v1/link/token/exchange", { public_token: String(body.public_token ?? "") })
    connectionId = exchanged.data.connection_id
    return { connection_id: connectionId, provider: exchanged.data.provider, state: exchanged.data.state }
  },
  "GET /api/connection": async () => {
    if (connectionId === null) return { connection: null }
    return { connection: (await api("GET", `/v1/connections/${connectionId}`)).data }
  },
  "GET /api/facilities": async () => {
    if (connectionId === null) throw new ApiError(409, { error: { message: "Link an account first" } })
    return (await api("GET", `/v1/connections/${connectionId}/facilities`)).data
  },
  "GET /api/packages": async (_body, query) => {
    if (connectionId === null) throw new ApiError(409, { error: { message: "Link an account first" } })
    const facility = encodeURIComponent(query.get("facility_id") ?? "")
    const number = Math.max(1, Number.parseInt(query.get("page") ?? "1", 10) || 1)
    const page = await api("GET", `/v1/connections/${connectionId}/facilities/${facility}/packages?per_page=10&page=${number}`)
    return { data: page.data, pagination: page.pagination }
  },
  "POST /api/simulate": async (body) => {
    if (connectionId === null) throw new ApiError(409, { error: { message: "Link an account first" } })
    const simulated = await api("POST", `/v1/sandbox/${connectionId}/simulate`, { scenario: String(body.scenario) })
    return { scenario: simulated.data.scenario, deliveries: simulated.data.deliveries }
  },
  "GET /api/webhooks": async () => ({ subscribed: webhookSecret !== null, received })
}

const readBody = (req) =>
  new Promise((resolve, reject) => {
    const chunks = []
    req.on("data", (chunk) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const send = (res, status, body, type = "application/json") => {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store" })
  res.end(type === "application/json" ? JSON.stringify(body) : body)
}

const page = readFileSync(join(here, "index.html"), "utf8").replaceAll("%TRACEBRIDGE_URL%", tracebridge.url)

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", self)
  try {
    if (req.method === "GET" && (url.pathname === "/" || url.pathname === "/callback")) {
      return send(res, 200, page, "text/html; charset=utf-8")
    }
    const raw = await readBody(req)
    if (req.method === "POST" && url.pathname === "/webhooks") {
      const { body, status } = await onWebhook(raw, req.headers["x-tracebridge-signature"])
      return send(res, status, body)
    }
    const route = routes[`${req.method} ${url.pathname}`]
    if (route === undefined) return send(res, 404, { error: { message: "Not found" } })
    let json = {}
    if (raw !== "") {
      try {
        json = JSON.parse(raw)
      } catch {
        return send(res, 400, { error: { message: "The body is not JSON" } })
      }
    }
    return send(res, 200, await route(json, url.searchParams))
  } catch (error) {
    const status = error instanceof ApiError ? (error.status >= 500 ? 502 : error.status) : 500
    const envelope = error instanceof ApiError ? error.body?.error : undefined
    return send(res, status, {
      error: { code: envelope?.code ?? "quickstart_error", message: error.message, request_id: envelope?.request_id }
    })
  }
})

server.listen(port, host, async () => {
  await subscribe()
  console.log(`[quickstart] Tracebridge: ${tracebridge.url}`)
  console.log(`[quickstart] open ${self} and click "Link account" (sandbox login: Metrc, any state, user_good)`)
})
