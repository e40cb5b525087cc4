/**
 * The dashboard's browser tests' shared parts (issue #33): the built server started as a child
 * process on a free port with a data folder of its own (`startServer`, in a test file's
 * `beforeAll`; settings of its own, such as an OpenID provider's, may be added), the operator's CLI
 * on the same database (`admin`), Debian's Chromium through playwright-core, the `/v1` calls a test makes beside the
 * pages, a page that records CSP refusals and script errors (`open`), the checks every page passes
 * (`check`: no sideways scroll, no serious or critical axe-core violation), screenshots (`shoot`;
 * with TRACEBRIDGE_SCREENSHOTS=docs also into docs/images/dashboard/), and the sign-in steps.
 *
 * The server runs on SQLite in its data folder, or, with `TRACEBRIDGE_BROWSER_DATABASE=postgres`
 * and `TEST_DATABASE_URL` set (as `npm run test:pg` sets them for the dashboard's projects), on a
 * fresh Postgres schema `dash_<random>` of that database, dropped once the server has stopped
 * (`serverDatabase`).
 *
 * The server's origin, the browser and the first owner's link are live exports, set once the
 * server is up.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core"
import { afterAll, beforeAll, expect } from "vitest"

export const root = fileURLToPath(new URL("../../../../", import.meta.url))
const main = join(root, "packages/http/dist/main.js")
const cli = join(root, "packages/http/dist/cli.js")
export const shots = join(root, "packages/dashboard/build/screenshots")
const docs = join(root, "docs/images/dashboard")
const toDocs = process.env.TRACEBRIDGE_SCREENSHOTS === "docs"
mkdirSync(shots, { recursive: true })
if (toDocs) mkdirSync(docs, { recursive: true })

const axeSource = readFileSync(join(root, "node_modules/axe-core/axe.min.js"), "utf8")
export const PASSWORD = "a long enough passphrase"

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/** Which database the browser tests' server runs on (`TRACEBRIDGE_BROWSER_DATABASE`). */
export const databaseKind: "sqlite" | "postgres" = process.env.TRACEBRIDGE_BROWSER_DATABASE === "postgres"
  ? "postgres"
  : "sqlite"

const psql = (url: string, statement: string) =>
  execFileSync("psql", ["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", statement], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PGCONNECT_TIMEOUT: "10" }
  })

/**
 * The server's database settings: none for SQLite (its data folder holds it); for Postgres, a
 * fresh schema of `TEST_DATABASE_URL` and a `DATABASE_URL` whose connections see only it (as
 * `packages/http/test/support/PgSchema.ts` makes them). `drop` removes the schema; call it once the
 * server has stopped.
 */
export const serverDatabase = (): {
  readonly env: Readonly<Record<string, string>>
  /** Fails unless the server migrated its database there (the schema holds its tables). */
  readonly verify: () => void
  readonly drop: () => void
} => {
  if (databaseKind === "sqlite") return { env: {}, verify: () => {}, drop: () => {} }
  const url = process.env.TEST_DATABASE_URL
  if (url === undefined || url === "") {
    throw new Error("TRACEBRIDGE_BROWSER_DATABASE=postgres needs TEST_DATABASE_URL (postgres://user:password@host/db)")
  }
  const schema = `dash_${randomUUID().replaceAll("-", "")}`
  psql(url, `CREATE SCHEMA ${schema}`)
  const scoped = new URL(url)
  scoped.searchParams.set("options", `-c search_path=${schema}`)
  return {
    env: { DATABASE_URL: scoped.href },
    verify: () => {
      const tables = Number(
        String(psql(
          url,
          `SELECT COUNT(*) FROM information_schema.tables
        WHERE table_schema = '${schema}' AND table_name IN ('connections', 'dashboard_users')`
        )).trim()
      )
      if (tables !== 2) throw new Error(`the server did not migrate schema ${schema} (${tables} of its tables found)`)
    },
    drop: () => void psql(url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  }
}

/** The environment the server inherits: this process's, without Tracebridge's settings or a database. */
export const inheritedEnv = (): Record<string, string> => {
  const inherited: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("TRACEBRIDGE_") && key !== "DATABASE_URL") inherited[key] = value
  }
  return inherited
}

let server: ChildProcess
let dataDir = ""
/** The server's environment, for the CLI (`admin`). */
let serverEnv: Record<string, string> = {}
let dropDatabase = () => {}
/** The browser, once started. */
export let browser: Browser
/** The server's origin (`http://127.0.0.1:<port>`), once it is up. */
export let origin = ""
/** What the server printed. */
export let output = ""
/** The first owner's invitation link from the start banner. */
export let ownerLink = ""

/** Settings added to the server's environment: fixed, or made once its origin is known. */
export type ServerEnv =
  | Readonly<Record<string, string>>
  | ((origin: string) => Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>)

/**
 * Starts the built server (with `env` added to its environment; a function of the server's
 * origin is called first, before the server starts) and the browser before the file's tests, and
 * stops both after them.
 */
export const startServer = (env: ServerEnv = {}): void => {
  beforeAll(async () => {
    for (const built of [main, cli, join(root, "packages/dashboard/dist/index.html")]) {
      if (!existsSync(built)) {
        throw new Error(`${built} is missing: build first (npx turbo run build --filter=@tracebridge/http)`)
      }
    }
    const port = await freePort()
    origin = `http://127.0.0.1:${port}`
    dataDir = mkdtempSync(join(tmpdir(), "tracebridge-dashboard-"))
    const database = serverDatabase()
    dropDatabase = database.drop
    serverEnv = {
      ...inheritedEnv(),
      HOST: "127.0.0.1",
      PORT: String(port),
      TRACEBRIDGE_DATA_DIR: dataDir,
      TRACEBRIDGE_LOG_FORMAT: "json",
      ...database.env,
      ...(typeof env === "function" ? await env(origin) : env)
    }
    server = spawn(process.execPath, [main], { env: serverEnv, stdio: ["ignore", "pipe", "pipe"] })
    server.stdout!.on("data", (chunk) => (output += chunk))
    server.stderr!.on("data", (chunk) => (output += chunk))
    const linkPattern = new RegExp(`${origin}/dashboard/accept\\?token=tbi_[A-Za-z0-9_-]+`)
    for (let i = 0; i < 300 && !(linkPattern.test(output) && output.includes("Tracebridge API on")); i++) {
      if (server.exitCode !== null) throw new Error(`the server exited: ${output}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    ownerLink = linkPattern.exec(output)![0]
    database.verify()
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
    if (dataDir !== "") rmSync(dataDir, { recursive: true, force: true })
    dropDatabase()
  })
}

/** The operator's CLI (`packages/http/dist/cli.js`) on the server's database: what it printed. */
export const admin = (...args: ReadonlyArray<string>): string => {
  const run = spawnSync(process.execPath, [cli, ...args], { env: serverEnv, encoding: "utf8" })
  if (run.status !== 0) throw new Error(`admin ${args.join(" ")}: ${run.stderr}`)
  return run.stdout
}

/** `POST /v1/oauth/token` with a client's id and secret: the status, and the token when issued. */
export const token = async (clientId: string, secret: string) => {
  const response = await fetch(`${origin}/v1/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "client_credentials", client_id: clientId, client_secret: secret })
  })
  const body = await response.json() as { access_token?: string }
  return { status: response.status, access: body.access_token }
}

export const v1 = async (method: string, path: string, access: string, json?: unknown) => {
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

export interface Viewport {
  readonly name: string
  readonly width: number
  readonly height: number
}

export const viewports: ReadonlyArray<Viewport> = [
  { name: "1280", width: 1280, height: 800 },
  { name: "375", width: 375, height: 740 }
]

/**
 * A page of a fresh context that records our pages' CSP refusals, script errors and dialogs (not
 * another origin's, such as an identity provider's login form). A refused call whose status
 * matches `answered` (401, 403 and 404 unless told) is the API answering, not the page failing.
 */
export const open = async (viewport: Viewport, answered: RegExp = /^40[134]$/) => {
  const context: BrowserContext = await browser.newContext({ viewport })
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin })
  const page = await context.newPage()
  const problems: Array<string> = []
  page.on("console", (message) => {
    if (!page.url().startsWith(origin)) return
    if (message.type() === "error" || /Content.Security.Policy|Refused to/i.test(message.text())) {
      const refused = /Failed to load resource: the server responded with a status of (\d{3})/.exec(message.text())
      if (refused === null || !answered.test(refused[1]!)) problems.push(message.text())
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
      // what sticks out, to say where (outside the boxes that scroll on their own)
      [...document.querySelectorAll("body *")]
        .filter((el) => !el.closest(".table-box") && el.getBoundingClientRect().right > window.innerWidth + 0.5)
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
  // evaluated over the DevTools protocol, which the page's CSP does not govern (no bypassCSP)
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ["violations"] })
    return (result.violations as Array<any>)
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(" ")).join(", ")}`)
  })
  expect(violations, `${where}: axe`).toEqual([])
  await reachable(page, where)
}

/**
 * Keyboard reachability: Tab walks the page from its top (at most three times as many presses as
 * there are controls, and 40 more, counted again at every look; a second pass if one missed),
 * and every visible, enabled control (link, button, input, select, textarea) of the header (skip
 * link, organisation switch, navigation) and of the main content receives focus. A group of radio buttons counts once (Tab enters it once). A frame's own
 * controls (the Connect widget) are its own; the frame is passed through. The focus and the
 * scroll positions are put back where they were, so a screenshot after it is the same.
 */
export const reachable = async (page: Page, where: string) => {
  const total = await page.evaluate(() => {
    const w = window as any
    // The controls on the page now (read again at every look: a list that loads or re-renders
    // during the walk replaces its rows, and the walk must reach the ones on the page).
    const controlsNow = () => {
      const selector = ":is(header.top, main) :is(a[href], button, input, select, textarea)"
      const controls = [...document.querySelectorAll<HTMLElement>(selector)].filter((el) =>
        !(el as HTMLButtonElement).disabled && !el.matches(":disabled") &&
        !(el instanceof HTMLInputElement && el.type === "hidden") &&
        el.getClientRects().length > 0 && el.checkVisibility({ visibilityProperty: true })
      )
      const radios = new Set<string>()
      return controls.filter((el) => {
        if (!(el instanceof HTMLInputElement) || el.type !== "radio" || el.name === "") return true
        if (radios.has(el.name)) return false
        radios.add(el.name)
        return true
      })
    }
    const expected = controlsNow()
    const reached = new Set<Element>()
    // the last stops the walk made, for the message of a miss
    const trail: Array<string> = []
    const listener = (event: FocusEvent) => {
      if (!(event.target instanceof Element)) return
      reached.add(event.target)
      const el = event.target as HTMLElement
      trail.push(`${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}`)
      if (trail.length > 12) trail.shift()
    }
    document.addEventListener("focusin", listener, true)
    const scrolled = [document.scrollingElement!, ...document.querySelectorAll(".table-box, input")].map((
      el
    ) => [el, el.scrollLeft, el.scrollTop] as const)
    const start = document.activeElement
    // Walk from the top of the page, not from wherever the focus was: one pass in document order
    // (a walk that must wrap around the page's end depends on where the browser sends focus then).
    const fromTop = () => {
      const top = document.createElement("span")
      top.tabIndex = -1
      document.body.prepend(top)
      top.focus({ preventScroll: true })
      top.remove()
    }
    fromTop()
    w.__reach = { controlsNow, reached, listener, start, scrolled, fromTop, trail }
    return expected.length
  })
  const missing = async () =>
    page.evaluate(() => {
      const { controlsNow, reached } = (window as any).__reach as {
        controlsNow: () => Array<HTMLElement>
        reached: Set<Element>
      }
      const now = controlsNow()
      const left = now.filter((el) =>
        !reached.has(el) &&
        !(el instanceof HTMLInputElement && el.type === "radio" &&
          [...reached].some((r) => r instanceof HTMLInputElement && r.type === "radio" && r.name === el.name))
      ).map((el) =>
        `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""} "${
          (el.getAttribute("aria-label") ?? el.textContent ?? (el as HTMLInputElement).value ?? "").trim().slice(0, 40)
        }"`
      )
      return { left, count: now.length }
    })
  let left: Array<string> = []
  let trail: Array<string> = []
  try {
    // A second pass from the top, keeping what the first reached, takes in a control that a
    // re-render replaced after the first pass had passed it; a control Tab never reaches is
    // missed by both.
    for (let pass = 0; pass < 2; pass++) {
      if (pass > 0) await page.evaluate(() => (window as any).__reach.fromTop())
      // The bound grows with the page (a list that loads during the walk adds controls), and
      // leaves room for stops that are not controls: a date field's parts, a scrolling table.
      let limit = total * 3 + 40
      for (let pressed = 0; pressed < limit; pressed++) {
        await page.keyboard.press("Tab")
        if (pressed % 10 === 9) {
          const look = await missing()
          left = look.left
          limit = Math.max(limit, look.count * 3 + 40)
          if (left.length === 0) break
        }
      }
      left = (await missing()).left
      if (left.length === 0) break
    }
    trail = await page.evaluate(() => [...(window as any).__reach.trail as Array<string>])
  } finally {
    await page.evaluate(() => {
      const { listener, scrolled, start } = (window as any).__reach as {
        listener: (event: FocusEvent) => void
        start: Element | null
        scrolled: Array<readonly [Element, number, number]>
      }
      document.removeEventListener("focusin", listener, true)
      if (start instanceof HTMLElement && start !== document.body) start.focus({ preventScroll: true })
      else (document.activeElement as HTMLElement | null)?.blur()
      for (const [el, x, y] of scrolled) el.scrollTo({ left: x, top: y, behavior: "instant" })
      delete (window as any).__reach
    })
  }
  expect(left, `${where}: not reachable by Tab: ${left.join(", ")} (the last stops: ${trail.join(" ")})`).toEqual(
    []
  )
}

export const shoot = async (page: Page, name: string, viewport: Viewport, mask: ReadonlyArray<Locator> = []) => {
  const file = `${name}-${viewport.name}.png`
  // no focus ring of the last control a check tabbed to (`reachable`)
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur())
  await page.screenshot({ path: join(shots, file), mask: [...mask], maskColor: "#334155" })
  if (toDocs) copyFileSync(join(shots, file), join(docs, file))
}

/** A failure's screenshot, for the report. */
export const failureShot = (page: Page, name: string) =>
  page.screenshot({ path: join(shots, `failure-${name}.png`) }).catch(() => {})

export const heading = (page: Page, name: string | RegExp) => page.getByRole("heading", { level: 1, name }).waitFor()

export const nav = async (page: Page, name: string) => {
  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name, exact: true }).click()
  await heading(page, name === "API keys" ? "API keys" : name)
}

export const accept = async (page: Page, link: string, email: string) => {
  await page.goto(link)
  await heading(page, "Accept an invitation")
  await page.getByLabel("E-mail").fill(email)
  await page.getByLabel(/^Password/).fill(PASSWORD)
  await page.getByRole("button", { name: "Accept and sign in" }).click()
  await heading(page, "API keys")
  // the token left the address bar
  expect(page.url()).toBe(`${origin}/dashboard/keys`)
}

export const signOut = async (page: Page) => {
  await page.getByRole("button", { name: "Sign out" }).click()
  await heading(page, "Sign in")
}

export const signIn = async (page: Page, email: string) => {
  await page.getByLabel("E-mail").fill(email)
  await page.getByLabel("Password").fill(PASSWORD)
  await page.getByRole("button", { name: "Sign in" }).click()
  await heading(page, "Overview")
}

/** The pages' Content-Security-Policy (`DashboardPages.CSP`). */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

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
