/**
 * The quickstart as a new user tries it: `node examples/quickstart/server.mjs` (the command behind
 * `npm run quickstart`) starts an embedded Tracebridge and the integrator app; in Chromium the user
 * clicks "Link account", links the sandbox login in the widget, and sees the facilities and a page
 * of packages; a simulated transfer arrives as a verified webhook. Screenshots go to
 * examples/quickstart/build/screenshots (not committed).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const here = fileURLToPath(new URL("..", import.meta.url))
const shots = join(here, "build", "screenshots")
mkdirSync(shots, { recursive: true })

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

let app: ChildProcess
let browser: Browser
let page: Page
let origin = ""
let output = ""

beforeAll(async () => {
  const [appPort, apiPort] = [await freePort(), await freePort()]
  origin = `http://127.0.0.1:${appPort}`
  app = spawn(process.execPath, [join(here, "server.mjs")], {
    env: {
      ...process.env,
      QUICKSTART_PORT: String(appPort),
      TRACEBRIDGE_PORT: String(apiPort),
      TRACEBRIDGE_URL: "",
      TRACEBRIDGE_CLIENT_ID: "",
      TRACEBRIDGE_CLIENT_SECRET: ""
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  app.stdout!.on("data", (chunk) => (output += chunk))
  app.stderr!.on("data", (chunk) => (output += chunk))
  for (let i = 0; i < 300 && !output.includes("click \"Link account\""); i++) {
    if (app.exitCode !== null) throw new Error(`the quickstart exited: ${output}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  expect(output).toContain(`open ${origin}`)
  // the app subscribed itself to the webhooks (what it printed says why when it did not)
  expect(output).toContain("[quickstart] subscribed")
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-quic"]
  })
  page = await browser.newPage({ viewport: { width: 1000, height: 900 } })
})

afterAll(async () => {
  await browser?.close()
  if (app && app.exitCode === null) {
    const exited = new Promise((resolve) => app.once("exit", resolve))
    app.kill("SIGTERM")
    await exited
  }
})

describe.sequential("quickstart", () => {
  it("links a sandbox connection by clicking and lists its facilities and packages", async () => {
    await page.goto(origin)
    await page.getByRole("button", { name: "Link account" }).click()
    const widget = page.frameLocator("iframe[title='Tracebridge Connect']")
    await widget.getByRole("button", { name: "Metrc" }).click()
    await widget.getByLabel("State").selectOption("CO")
    await widget.getByRole("button", { name: "Continue" }).click()
    await widget.getByLabel("User API key").fill("user_good")
    await widget.getByRole("button", { name: "Link account" }).click()
    await widget.getByRole("heading", { name: "Your account is linked." }).waitFor({ timeout: 30_000 })
    await widget.getByRole("button", { name: "Continue" }).click()

    await page.locator("#packages tbody tr").first().waitFor({ timeout: 30_000 })
    await page.screenshot({ path: join(shots, "quickstart-linked.png"), fullPage: true })

    expect(await page.locator("#connection-info").innerText()).toMatch(/provider_a CO\s+active$/)
    expect(await page.locator("#facilities tbody tr").count()).toBeGreaterThan(0)
    const packages = page.locator("#packages tbody tr")
    expect(await packages.count()).toBeGreaterThan(0)
    expect(await packages.count()).toBeLessThanOrEqual(10)
    expect(await page.locator("#packages-title").innerText()).toMatch(/^Packages of .+ \(page 1 of \d+, \d+ in all\)$/)
    const events = (await page.locator("#events").innerText()).split("\n")
    expect(events[0]).toBe("OPEN")
    expect(events.at(-1)).toBe("SUCCESS")
    expect(await page.locator("#error").innerText()).toBe("")
    // The browser never held the client secret or the access token.
    expect(await page.content()).not.toMatch(/tb_secret_|access_token/)
  })

  it("receives a simulated transfer as a verified webhook", async () => {
    await page.getByRole("button", { name: "Simulate a transfer arriving" }).click()
    const row = page.locator("#webhooks tbody tr", { hasText: "transfer.arrived" })
    await row.first().waitFor({ timeout: 30_000 })
    expect(await row.first().innerText()).toContain("verified")
    await page.screenshot({ path: join(shots, "quickstart-webhook.png"), fullPage: true })
  })

  it("fits a 375 px phone: no sideways scrolling, and every facility's Packages button visible and working", async () => {
    const phone = await browser.newPage({ viewport: { width: 375, height: 740 } })
    try {
      const noOverflow = async (where: string) => {
        const [scrollWidth, innerWidth] = await phone.evaluate(() => [
          document.scrollingElement!.scrollWidth,
          window.innerWidth
        ])
        expect(scrollWidth, `${where}: the page scrolls sideways`).toBeLessThanOrEqual(innerWidth!)
      }
      await phone.goto(origin)
      await phone.locator("#packages tbody tr").first().waitFor({ timeout: 30_000 })
      await noOverflow("linked")
      const buttons = phone.getByRole("button", { name: /^Packages of / })
      const count = await buttons.count()
      expect(count).toBe(await phone.locator("#facilities tbody tr").count())
      expect(count).toBeGreaterThan(1)
      for (let i = 0; i < count; i++) {
        const button = buttons.nth(i)
        expect(await button.isVisible(), `Packages button ${i}`).toBe(true)
        const box = (await button.boundingBox())!
        expect(box.x).toBeGreaterThanOrEqual(0)
        expect(box.x + box.width).toBeLessThanOrEqual(375)
      }
      // the last facility's button shows that facility's packages
      const name = (await buttons.nth(count - 1).getAttribute("aria-label"))!.replace(/^Packages of /, "")
      await buttons.nth(count - 1).scrollIntoViewIfNeeded()
      await buttons.nth(count - 1).click()
      await phone.locator("#packages-title", { hasText: `Packages of ${name} (page 1` }).waitFor({ timeout: 30_000 })
      await noOverflow("another facility's packages")
      if (await phone.locator("#more").isVisible()) {
        await phone.locator("#more").click()
        await phone.locator("#packages-title", { hasText: "(page 2 of" }).waitFor({ timeout: 30_000 })
        await noOverflow("page 2")
      }
      await phone.screenshot({ path: join(shots, "quickstart-375.png"), fullPage: true })
      // the widget opens over it, still within the width
      await phone.getByRole("button", { name: "Link account" }).click()
      const widget = phone.frameLocator("iframe[title='Tracebridge Connect']")
      await widget.getByRole("button", { name: "Metrc" }).waitFor({ timeout: 30_000 })
      await noOverflow("widget open")
      expect(await widget.locator("#close").isVisible()).toBe(true)
      await widget.locator("#close").click()
      await phone.locator("iframe").waitFor({ state: "detached", timeout: 10_000 })
    } finally {
      await phone.close()
    }
  })

  it("refuses a delivery whose signature does not verify", async () => {
    const body = JSON.stringify({ id: "evt_forged", type: "transfer.arrived", data: {} })
    const now = Math.floor(Date.now() / 1000)
    const forged = await fetch(`${origin}/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-tracebridge-signature": `t=${now},v1=${"0".repeat(64)}` },
      body
    })
    expect(forged.status).toBe(400)
    expect(await forged.json()).toEqual({ error: "no_matching_signature" })
    const unsigned = await fetch(`${origin}/webhooks`, { method: "POST", body })
    expect(unsigned.status).toBe(400)
    const listed = await (await fetch(`${origin}/api/webhooks`)).json()
    expect(listed.received.some((e: { id: string }) => e.id === "evt_forged")).toBe(false)
  })
})
