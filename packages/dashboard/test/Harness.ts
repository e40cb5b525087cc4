/**
 * What the dashboard's browser tests share: the built server started as a child process on a free
 * port with a data folder of its own, Debian's Chromium through playwright-core, a page that
 * records CSP refusals and script errors, the per-page check (no sideways scroll, no serious or
 * critical axe-core violation), screenshots, and `/v1` calls. (The same steps as in
 * `support/Browser.ts`, whose database choice it shares: SQLite, or a fresh Postgres schema.)
 */
import { type ChildProcess, spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core"
import { expect } from "vitest"
import { inheritedEnv, serverDatabase } from "./support/Browser.js"

export const root = fileURLToPath(new URL("../../../", import.meta.url))
const main = join(root, "packages/http/dist/main.js")
const shots = join(root, "packages/dashboard/build/screenshots")
const docs = join(root, "docs/images/dashboard")
const toDocs = process.env.TRACEBRIDGE_SCREENSHOTS === "docs"
const axeSource = readFileSync(join(root, "node_modules/axe-core/axe.min.js"), "utf8")

export const PASSWORD = "a long enough passphrase"

export interface Viewport {
  readonly name: string
  readonly width: number
  readonly height: number
}

export const viewports: ReadonlyArray<Viewport> = [
  { name: "1280", width: 1280, height: 800 },
  { name: "375", width: 375, height: 740 }
]

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

export interface Running {
  readonly origin: string
  /** The first start's one-time link that makes the organisation's first owner. */
  readonly ownerLink: string
  readonly browser: Browser
  readonly stop: () => Promise<void>
}

/** Starts the built server and Chromium. */
export const start = async (): Promise<Running> => {
  mkdirSync(shots, { recursive: true })
  if (toDocs) mkdirSync(docs, { recursive: true })
  for (const built of [main, join(root, "packages/dashboard/dist/index.html")]) {
    if (!existsSync(built)) {
      throw new Error(`${built} is missing: build first (npx turbo run build --filter=@tracebridge/http)`)
    }
  }
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const dataDir = mkdtempSync(join(tmpdir(), "tracebridge-dashboard-"))
  // SQLite in the data folder, or a fresh Postgres schema (TRACEBRIDGE_BROWSER_DATABASE=postgres)
  const database = serverDatabase()
  let output = ""
  const server: ChildProcess = spawn(process.execPath, [main], {
    env: {
      ...inheritedEnv(),
      HOST: "127.0.0.1",
      PORT: String(port),
      TRACEBRIDGE_DATA_DIR: dataDir,
      TRACEBRIDGE_LOG_FORMAT: "json",
      ...database.env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  server.stdout!.on("data", (chunk) => (output += chunk))
  server.stderr!.on("data", (chunk) => (output += chunk))
  const linkPattern = new RegExp(`${origin}/dashboard/accept\\?token=tbi_[A-Za-z0-9_-]+`)
  for (let i = 0; i < 300 && !(linkPattern.test(output) && output.includes("Tracebridge API on")); i++) {
    if (server.exitCode !== null) {
      database.drop()
      throw new Error(`the server exited: ${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const ownerLink = linkPattern.exec(output)![0]
  database.verify()
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-quic"]
  })
  return {
    origin,
    ownerLink,
    browser,
    stop: async () => {
      await browser.close()
      if (server.exitCode === null) {
        const exited = new Promise((resolve) => server.once("exit", resolve))
        server.kill("SIGTERM")
        await exited
      }
      rmSync(dataDir, { recursive: true, force: true })
      database.drop()
    }
  }
}

/** A page of a fresh context that records CSP refusals, script errors and dialogs. */
export const open = async (running: Running, viewport: Viewport) => {
  const context: BrowserContext = await running.browser.newContext({ viewport })
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: running.origin })
  const page = await context.newPage()
  const problems: Array<string> = []
  page.on("console", (message) => {
    if (message.type() === "error" || /Content.Security.Policy|Refused to/i.test(message.text())) {
      // a refused call's 4xx is the API answering, not the page failing
      if (!/Failed to load resource: the server responded with a status of (40\d)/.test(message.text())) {
        problems.push(message.text())
      }
    }
  })
  page.on("pageerror", (error) => problems.push(String(error)))
  page.on("dialog", (dialog) => {
    problems.push(`a dialog opened: ${dialog.message()}`)
    void dialog.dismiss()
  })
  return { context, page, problems }
}

/** No sideways scrolling, and no serious or critical axe-core violation. */
export const check = async (page: Page, where: string) => {
  const [scrollWidth, innerWidth, wide] = await page.evaluate(() =>
    [
      document.scrollingElement!.scrollWidth,
      window.innerWidth,
      [...document.querySelectorAll("body *")]
        .filter((el) =>
          (!el.closest(".table-box") || el.classList.contains("table-box")) &&
          el.getBoundingClientRect().right > window.innerWidth + 0.5
        )
        .slice(0, 5)
        .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}.${el.className}`)
        .join(", ")
    ] as const
  )
  const culprit = scrollWidth <= innerWidth ? "" : await page.evaluate(() => {
    // the deepest element whose removal ends the sideways scroll
    let found = ""
    for (const el of [...document.querySelectorAll<HTMLElement>("body *")]) {
      const before = el.style.display
      el.style.display = "none"
      if (document.scrollingElement!.scrollWidth <= window.innerWidth) {
        found = `${el.tagName.toLowerCase()}.${el.className} "${(el.textContent ?? "").slice(0, 60)}"`
      }
      el.style.display = before
    }
    return found
  })
  expect(scrollWidth, `${where}: the page scrolls sideways (${wide}; ${culprit})`).toBeLessThanOrEqual(innerWidth)
  // evaluated over the DevTools protocol, which the page's CSP does not govern
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ["violations"] })
    return (result.violations as Array<any>)
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(" ")).join(", ")}`)
  })
  expect(violations, `${where}: axe`).toEqual([])
}

export const shoot = async (page: Page, name: string, viewport: Viewport, mask: ReadonlyArray<Locator> = []) => {
  const file = `${name}-${viewport.name}.png`
  await page.screenshot({ path: join(shots, file), mask: [...mask], maskColor: "#334155" })
  if (toDocs) copyFileSync(join(shots, file), join(docs, file))
}

/** A failure's screenshot, for the report. */
export const failureShot = (page: Page, name: string) =>
  page.screenshot({ path: join(shots, `failure-${name}.png`) }).catch(() => {})

export const heading = (page: Page, name: string | RegExp) => page.getByRole("heading", { level: 1, name }).waitFor()

/** Follows a navigation link; the new page's heading has the focus. */
export const nav = async (page: Page, name: string, title: string | RegExp = name) => {
  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name }).click()
  await heading(page, title)
  expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("H1")
}

/** `POST /v1/oauth/token` with a client's id and secret. */
export const token = async (origin: string, clientId: string, secret: string) => {
  const response = await fetch(`${origin}/v1/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "client_credentials", client_id: clientId, client_secret: secret })
  })
  const body = await response.json() as { access_token?: string }
  return { status: response.status, access: body.access_token }
}

export const v1 = async (origin: string, method: string, path: string, access: string, json?: unknown) => {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${access}`,
      ...(json === undefined ? {} : { "content-type": "application/json" })
    },
    ...(json === undefined ? {} : { body: JSON.stringify(json) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? null : JSON.parse(text) as any }
}

/** Calls the dashboard's API from the page, as the signed-in member (the CSRF token read first). */
export const dashboardCall = (page: Page, method: string, path: string, json?: unknown) =>
  page.evaluate(async ({ json, method, path }) => {
    const me = await (await fetch("/dashboard/api/session")).json()
    const response = await fetch(path, {
      method,
      headers: {
        "x-csrf-token": me.csrf_token,
        ...(json === undefined ? {} : { "content-type": "application/json" })
      },
      ...(json === undefined ? {} : { body: JSON.stringify(json) })
    })
    return { status: response.status, body: await response.json() as any }
  }, { method, path, json })

/** Waits until `test` holds, trying `attempts` times `every` ms apart. */
export const eventually = async (what: string, test: () => Promise<boolean>, attempts = 80, every = 250) => {
  for (let i = 0; i < attempts; i++) {
    if (await test()) return
    await new Promise((resolve) => setTimeout(resolve, every))
  }
  throw new Error(`never: ${what}`)
}
