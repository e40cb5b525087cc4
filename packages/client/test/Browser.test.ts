/**
 * The SDK in a browser: bundled by esbuild for `platform: "browser"` (a Node built-in anywhere in
 * the graph fails the build), then run in real Chromium (playwright-core driving Debian's
 * /usr/bin/chromium; no browser is downloaded). The page verifies a webhook signature made by the
 * server's signer and makes calls (token, a list, a write, an error) that `page.route` answers.
 */
import * as esbuild from "esbuild"
import { builtinModules } from "node:module"
import { fileURLToPath } from "node:url"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"

const entry = fileURLToPath(new URL("../src/index.ts", import.meta.url))
// An https origin is a secure context, where browsers offer Web Crypto's `subtle`.
const origin = "https://sdk.tracebridge.test"
const insecure = "http://sdk.tracebridge.test"

let browser: Browser
let bundle = ""

beforeAll(async () => {
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "silent"
  })
  const inputs = Object.keys(result.metafile.inputs)
  const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]))
  expect(inputs.filter((i) => builtins.has(i))).toEqual([])
  expect(inputs.some((i) => i.includes("openapi-fetch"))).toBe(true)
  bundle = result.outputFiles[0]!.text
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-quic"]
  })
})

afterAll(async () => {
  await browser?.close()
})

it("bundles for the browser with no Node built-in", async () => {
  // A bundle that imports a Node built-in does not build for the browser at all.
  const failed = await esbuild.build({
    stdin: { contents: "import { createHmac } from \"node:crypto\"; console.log(createHmac)", resolveDir: "." },
    bundle: true,
    platform: "browser",
    write: false,
    logLevel: "silent"
  }).then(() => "built", (e: esbuild.BuildFailure) => e.errors[0]!.text)
  expect(failed).toMatch(/node:crypto/)
  expect(bundle).not.toMatch(/from\s*["']node:/)
  expect(bundle.length).toBeGreaterThan(1000)
})

it("verifies a webhook and calls the API from Chromium", async () => {
  const dispatcherPath = new URL("../../http/dist/services/WebhookDispatcher.js", import.meta.url).href
  const dispatcher: {
    readonly signatureHeader: (secrets: ReadonlyArray<string>, timestamp: number, body: string) => string
  } = await import(/* @vite-ignore */ dispatcherPath)
  const body = JSON.stringify({
    id: "evt_browser",
    type: "transfer.arrived",
    created: new Date().toISOString(),
    api_version: "0.1.0",
    data: { id: "trf_1", connection_id: "conn_1", facility_id: "fac_1", transfer: {} }
  })
  const signature = dispatcher.signatureHeader(["whsec_browser"], Math.floor(Date.now() / 1000), body)

  const page = await browser.newPage()
  const seen: Array<{ method: string; path: string; headers: Record<string, string>; body: string | null }> = []
  await page.route(`${origin}/**`, async (route) => {
    const request = route.request()
    const path = new URL(request.url()).pathname
    if (path === "/") {
      return route.fulfill({
        contentType: "text/html",
        body: "<!doctype html><title>sdk</title>" +
          "<script type=\"module\">import * as sdk from \"/sdk.js\"; window.sdk = sdk</script>"
      })
    }
    if (path === "/sdk.js") return route.fulfill({ contentType: "text/javascript", body: bundle })
    seen.push({ method: request.method(), path, headers: await request.allHeaders(), body: request.postData() })
    const json = (status: number, value: unknown) =>
      route.fulfill({ status, contentType: "application/json", body: JSON.stringify(value) })
    const meta = { request_id: "req_browser", timestamp: new Date().toISOString() }
    if (path === "/v1/oauth/token") {
      return json(200, { access_token: "tb_at_browser", token_type: "Bearer", expires_in: 3600, refresh_token: "r" })
    }
    if (path === "/v1/connections") {
      return json(200, {
        data: [],
        meta,
        pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 }
      })
    }
    if (path === "/v1/link/token/create") {
      return json(200, { data: { link_token: "link-sandbox-browser", expires_at: meta.timestamp }, meta })
    }
    return json(404, {
      error: {
        type: "not_found_error",
        code: "resource_not_found",
        message: "No such connection",
        request_id: "req_404"
      }
    })
  })
  await page.goto(`${origin}/`)
  await page.waitForFunction(() => (globalThis as any).sdk !== undefined)
  const result = await page.evaluate(
    async ({ body, signature, origin }) => {
      const sdk = (globalThis as any).sdk
      const event = await sdk.constructWebhookEvent(body, signature, "whsec_browser")
      const forged = await sdk.verifyWebhookSignature(body + " ", signature, "whsec_browser").then(
        () => "verified",
        (e: any) => `${e.name}:${e.reason}`
      )
      const tb = new sdk.Tracebridge({ baseUrl: origin, clientId: "tb_client_browser", clientSecret: "tb_secret_x" })
      const list = await tb.get("/v1/connections")
      const link = await tb.post("/v1/link/token/create", { body: {} })
      const missing = await tb.get("/v1/connections/{connection_id}", { params: { path: { connection_id: "conn_x" } } })
        .then(() => undefined, (e: any) => ({ name: e.name, status: e.status, code: e.code, requestId: e.requestId }))
      return {
        type: event.type,
        forged,
        total: list.pagination.total,
        linkToken: link.data.link_token,
        missing,
        crypto: typeof globalThis.crypto.subtle.sign
      }
    },
    { body, signature, origin }
  )
  expect(result).toEqual({
    type: "transfer.arrived",
    forged: "WebhookSignatureError:no_matching_signature",
    total: 0,
    linkToken: "link-sandbox-browser",
    missing: { name: "TracebridgeError", status: 404, code: "resource_not_found", requestId: "req_404" },
    crypto: "function"
  })
  expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual([
    "POST /v1/oauth/token",
    "GET /v1/connections",
    "POST /v1/link/token/create",
    "GET /v1/connections/conn_x"
  ])
  expect(JSON.parse(seen[0]!.body!)).toEqual({
    grant_type: "client_credentials",
    client_id: "tb_client_browser",
    client_secret: "tb_secret_x"
  })
  for (const s of seen.slice(1)) expect(s.headers.authorization).toBe("Bearer tb_at_browser")
  expect(seen[2]!.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/)
  await page.close()
})

it("outside a secure context: writes still get an idempotency key; verifying says why it cannot", async () => {
  const page = await browser.newPage()
  const keys: Array<string | undefined> = []
  await page.route(`${insecure}/**`, async (route) => {
    const path = new URL(route.request().url()).pathname
    if (path === "/") {
      return route.fulfill({
        contentType: "text/html",
        body: "<!doctype html><title>sdk</title>" +
          "<script type=\"module\">import * as sdk from \"/sdk.js\"; window.sdk = sdk</script>"
      })
    }
    if (path === "/sdk.js") return route.fulfill({ contentType: "text/javascript", body: bundle })
    keys.push((await route.request().allHeaders())["idempotency-key"])
    const meta = { request_id: "req_insecure", timestamp: new Date().toISOString() }
    return route.fulfill({
      contentType: "application/json",
      body: JSON.stringify({ data: { link_token: "link-sandbox-x", expires_at: meta.timestamp }, meta })
    })
  })
  await page.goto(`${insecure}/`)
  await page.waitForFunction(() => (globalThis as any).sdk !== undefined)
  const result = await page.evaluate(async (origin) => {
    const sdk = (globalThis as any).sdk
    const tb = new sdk.Tracebridge({ baseUrl: origin, token: "tb_ct_browser" })
    const link = await tb.post("/v1/link/token/create", { body: {} })
    const verified = await sdk.verifyWebhookSignature("{}", "t=1,v1=" + "0".repeat(64), "whsec_x", { now: () => 1000 })
      .then(() => "verified", (e: any) => e.message)
    return {
      secure: globalThis.isSecureContext,
      randomUUID: typeof crypto.randomUUID,
      link: link.data.link_token,
      verified
    }
  }, insecure)
  expect(result).toMatchObject({ secure: false, randomUUID: "undefined", link: "link-sandbox-x" })
  expect(result.verified).toMatch(/secure contexts/)
  expect(keys).toHaveLength(1)
  expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  await page.close()
})
