/**
 * Single sign-on in real Chromium (playwright-core, Debian's /usr/bin/chromium) against the built
 * server (`packages/http/dist/main.js`, a child process) configured with a real OpenID provider
 * (`oidc-provider` on a loopback port, its development login form), at 1280 × 800 and 375 × 740:
 *
 * - the sign-in page shows "Sign in with SSO" (a plain link; only when SSO is configured);
 * - the link leads through the provider's login back to the callback page, which signs in and
 *   opens the Overview; the code leaves the address bar;
 * - the person joins by a pending invitation (its organisation opens) and by the domain mapping,
 *   and the navigation's organisation switch moves between the two;
 * - an e-mail of no organisation's domain is refused on the callback page in the API's words;
 * - the Team page's "Single sign-on domains" section adds and removes a domain.
 *
 * On every page of ours: no sideways scrolling, no serious or critical axe-core violation, and no
 * CSP refusal. The redirect URL is not configured: it is derived from the server's origin.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import Provider from "oidc-provider"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const main = join(root, "packages/http/dist/main.js")
const cli = join(root, "packages/http/dist/cli.js")
const axeSource = readFileSync(join(root, "node_modules/axe-core/axe.min.js"), "utf8")
const CLIENT_SECRET = "browser-sso-client-secret-0d9e8f7a"

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

let server: ChildProcess
let idp: ReturnType<typeof createHttpServer>
let browser: Browser
let origin = ""
let output = ""
let dataDir = ""
let env: Record<string, string> = {}
let owner = { cookie: "", csrf: "", organisationId: "" }

/** The dashboard's API as the owner (cookie and CSRF token). */
const api = async (method: string, path: string, json?: unknown) => {
  const response = await fetch(`${origin}/dashboard/api${path}`, {
    method,
    headers: {
      cookie: `tb_session=${owner.cookie}`,
      "x-csrf-token": owner.csrf,
      ...(json === undefined ? {} : { "content-type": "application/json" })
    },
    ...(json === undefined ? {} : { body: JSON.stringify(json) })
  })
  return { status: response.status, body: response.status === 204 ? null : await response.json() as any }
}

const admin = (...args: Array<string>) => {
  const run = spawnSync(process.execPath, [cli, ...args], { env, encoding: "utf8" })
  if (run.status !== 0) throw new Error(`admin ${args.join(" ")}: ${run.stderr}`)
  return run.stdout
}

beforeAll(async () => {
  for (const built of [main, cli, join(root, "packages/dashboard/dist/index.html")]) {
    if (!existsSync(built)) {
      throw new Error(`${built} is missing: build first (npx turbo run build --filter=@tracebridge/http)`)
    }
  }
  const port = await freePort()
  origin = `http://127.0.0.1:${port}`
  // the provider, with the dashboard's client and its callback page at the server's origin
  idp = createHttpServer()
  await new Promise<void>((resolve) => idp.listen(0, "127.0.0.1", resolve))
  const issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`
  const provider = new Provider(issuer, {
    clients: [{
      client_id: "dashboard",
      client_secret: CLIENT_SECRET,
      redirect_uris: [`${origin}/dashboard/sso/callback`],
      grant_types: ["authorization_code"],
      response_types: ["code"]
    }],
    pkce: { required: () => true },
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, email: id, email_verified: true }) }),
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId!
      })
      grant.addOIDCScope("openid email")
      await grant.save()
      return grant
    },
    features: { devInteractions: { enabled: true } }
  })
  idp.on("request", provider.callback())

  dataDir = mkdtempSync(join(tmpdir(), "tracebridge-sso-"))
  env = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("TRACEBRIDGE_") && key !== "DATABASE_URL") env[key] = value
  }
  env = { ...env, HOST: "127.0.0.1", PORT: String(port), TRACEBRIDGE_DATA_DIR: dataDir, TRACEBRIDGE_LOG_FORMAT: "json" }
  server = spawn(process.execPath, [main], {
    env: {
      ...env,
      TRACEBRIDGE_OIDC_ISSUER: issuer,
      TRACEBRIDGE_OIDC_CLIENT_ID: "dashboard",
      TRACEBRIDGE_OIDC_CLIENT_SECRET: CLIENT_SECRET
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  server.stdout!.on("data", (chunk) => (output += chunk))
  server.stderr!.on("data", (chunk) => (output += chunk))
  const linkPattern = new RegExp(`${origin}/dashboard/accept\\?token=(tbi_[A-Za-z0-9_-]+)`)
  for (let i = 0; i < 300 && !(linkPattern.test(output) && output.includes("Tracebridge API on")); i++) {
    if (server.exitCode !== null) throw new Error(`the server exited: ${output}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  // the first owner, by password; the organisation claims acme.test
  const accepted = await fetch(`${origin}/dashboard/api/invitations/accept`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      token: linkPattern.exec(output)![1],
      email: "owner@example.com",
      password: "a long enough passphrase"
    })
  })
  const me = await accepted.json() as any
  owner = {
    cookie: /tb_session=([^;]+)/.exec(accepted.headers.get("set-cookie") ?? "")![1]!,
    csrf: me.csrf_token,
    organisationId: me.organisation.id
  }
  expect((await api("POST", "/sso/domains", { domain: "acme.test", role: "developer" })).status).toBe(201)
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-quic"]
  })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once("exit", resolve))
    server.kill("SIGTERM")
    await exited
  }
  await new Promise((resolve) => idp?.close(resolve))
  if (dataDir !== "") rmSync(dataDir, { recursive: true, force: true })
})

const viewports = [{ name: "1280", width: 1280, height: 800 }, { name: "375", width: 375, height: 740 }] as const

/** A page of a fresh context (no provider session) that records our pages' CSP refusals and errors. */
const open = async (viewport: { readonly width: number; readonly height: number }) => {
  const context = await browser.newContext({ viewport })
  const page = await context.newPage()
  const problems: Array<string> = []
  page.on("console", (message) => {
    if (!page.url().startsWith(origin)) return
    if (message.type() === "error" || /Content.Security.Policy|Refused to/i.test(message.text())) {
      if (!/Failed to load resource: the server responded with a status of (401|403|404|409)/.test(message.text())) {
        problems.push(message.text())
      }
    }
  })
  page.on("pageerror", (error) => problems.push(String(error)))
  return { context, page, problems }
}

/** No sideways scrolling, and no serious or critical axe-core violation. */
const check = async (page: Page, where: string) => {
  const [scrollWidth, innerWidth] = await page.evaluate(() => [
    document.scrollingElement!.scrollWidth,
    window.innerWidth
  ])
  expect(scrollWidth, `${where}: the page scrolls sideways`).toBeLessThanOrEqual(innerWidth)
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ["violations"] })
    return (result.violations as Array<any>)
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(" ")).join(", ")}`)
  })
  expect(violations, `${where}: axe`).toEqual([])
}

const heading = (page: Page, name: string | RegExp) => page.getByRole("heading", { level: 1, name }).waitFor()

/** From the sign-in page, through the provider's login form, back to us. */
const ssoAs = async (page: Page, email: string) => {
  await page.goto(`${origin}/dashboard`)
  await heading(page, "Sign in")
  await page.getByRole("link", { name: "Sign in with SSO" }).click()
  await page.waitForURL((url) => !url.href.startsWith(origin))
  await page.locator(`input[name="login"]`).fill(email)
  await page.locator(`input[name="password"]`).fill("any password")
  await page.locator(`button[type="submit"]`).click()
  await page.waitForURL((url) => url.href.startsWith(origin))
}

describe.sequential("single sign-on in the browser", () => {
  for (const viewport of viewports) {
    it(`at ${viewport.name} px: SSO signs in by invitation and domain, the switch moves between them, and a stranger is refused`, async () => {
      const email = `dev-${viewport.name}@acme.test`
      // a second organisation invites this e-mail (the operator's CLI)
      const partner = admin("create-org", `Partner ${viewport.name}`).trim().split("\t")[0]!
      admin("invite", partner, email, "--role", "viewer")

      const { context, page, problems } = await open(viewport)
      await page.goto(`${origin}/dashboard`)
      await heading(page, "Sign in")
      await page.getByRole("link", { name: "Sign in with SSO" }).waitFor()
      expect(await page.getByRole("link", { name: "Sign in with SSO" }).getAttribute("href")).toBe(
        "/dashboard/api/sso/start"
      )
      await check(page, `sign-in with SSO at ${viewport.name}`)

      await ssoAs(page, email)
      await heading(page, "Overview")
      // the code and state left the address bar
      expect(page.url()).toBe(`${origin}/dashboard/overview`)
      // the invitation's organisation opened, with its role
      await expect(page.locator("header .who").textContent()).resolves.toContain(`Partner ${viewport.name}`)
      await expect(page.locator("header .who").textContent()).resolves.toContain(`${email} (viewer)`)
      await check(page, `overview after SSO at ${viewport.name}`)

      // the organisation switch: to the domain's organisation, as a developer
      const select = page.getByLabel("Organisation", { exact: true })
      await select.selectOption(owner.organisationId)
      await page.getByRole("button", { name: "Switch" }).click()
      await expect.poll(() => page.locator("header .who").textContent()).toContain(`${email} (developer)`)
      await heading(page, "Overview")
      await check(page, `switched at ${viewport.name}`)
      const session = await page.evaluate(async () => (await fetch("/dashboard/api/session")).json())
      expect(session.organisation.id).toBe(owner.organisationId)
      await context.close()

      // an e-mail of no claimed domain: refused on the callback page, in the API's words
      const stranger = await open(viewport)
      await ssoAs(stranger.page, `someone-${viewport.name}@elsewhere.test`)
      await heading(stranger.page, "Signing in with SSO")
      await stranger.page.getByRole("alert").waitFor()
      expect(await stranger.page.getByRole("alert").textContent()).toContain(
        "No organisation for this e-mail domain (elsewhere.test)"
      )
      expect(stranger.page.url()).toBe(`${origin}/dashboard/sso/callback`)
      await check(stranger.page, `refused at ${viewport.name}`)
      await stranger.page.getByRole("link", { name: "Back to sign-in" }).click()
      await heading(stranger.page, "Sign in")
      await stranger.context.close()
      expect([...problems, ...stranger.problems]).toEqual([])
    })
  }

  it("the Team page's single sign-on domains: an owner adds and removes one", async () => {
    const { context, page, problems } = await open(viewports[0])
    await context.addCookies([{ name: "tb_session", value: owner.cookie, url: `${origin}/dashboard` }])
    await page.goto(`${origin}/dashboard/team`)
    await heading(page, "Team")
    const section = page.locator(`section[aria-labelledby="sso-heading"]`)
    await section.getByRole("cell", { name: "acme.test", exact: true }).waitFor()
    await page.getByLabel("Domain", { exact: true }).fill("Example.ORG")
    await page.locator("#sso-role").selectOption("viewer")
    await page.getByRole("button", { name: "Add domain" }).click()
    await section.getByRole("status").waitFor()
    expect(await section.getByRole("status").textContent()).toContain("example.org was added (viewer)")
    await section.getByRole("cell", { name: "example.org", exact: true }).waitFor()
    // refused in the API's words
    await page.getByLabel("Domain", { exact: true }).fill("example.org")
    await page.getByRole("button", { name: "Add domain" }).click()
    await section.getByRole("alert").waitFor()
    expect(await section.getByRole("alert").textContent()).toContain(
      "already one of this organisation's single sign-on domains"
    )
    await check(page, "team with SSO domains")
    await page.getByRole("button", { name: "Remove example.org" }).click()
    await page.getByRole("button", { name: "Yes, remove" }).click()
    await section.getByText("example.org was removed").waitFor()
    await section.getByRole("cell", { name: "example.org", exact: true }).waitFor({ state: "detached" })
    expect((await api("GET", "/sso/domains")).body.data.map((d: any) => d.domain)).toEqual(["acme.test"])
    await context.close()
    expect(problems).toEqual([])
    // the client secret never reached a log line
    expect(output).not.toContain(CLIENT_SECRET)
  })
})
