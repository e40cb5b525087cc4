/**
 * The dashboard's Connect and Sandbox pages in real Chromium (issue #33), against the built server,
 * at 1280 × 800 and at 375 × 740 (the helpers are `support/Browser.ts`, shared with Pages.test.ts):
 *
 * - Connect: an http logo is refused in the API's words; a name and an https logo are saved, and
 *   the preview is the real widget (`/connect`, framed by the dashboard under `frame-src 'self'`),
 *   opened with a sandbox link token, showing that name and that logo;
 * - Sandbox: a wrong test login is refused in the API's words; a sandbox connection is made; a
 *   scenario fires its event (shown), `connection_login_required` moves the connection to error and
 *   a reset brings it back; an `expired_login` fault, met by a `/v1` read, puts the connection under
 *   Issues on the Overview page, and clearing the fault takes it away.
 * - a viewer reads both pages (the name, the connections, their fault) and finds no control that
 *   changes anything.
 *
 * On every page: no sideways scroll, no serious or critical axe-core violation, no CSP refusal.
 * Screenshots: `connect-*.png`, `sandbox-*.png` (TRACEBRIDGE_SCREENSHOTS=docs puts them in docs).
 */
import { join } from "node:path"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import {
  accept,
  check,
  CSP,
  heading,
  nav,
  open,
  origin,
  ownerLink,
  shoot,
  shots,
  signIn,
  startServer,
  token,
  v1,
  viewports
} from "./support/Browser.js"

startServer()

const OWNER = "tools-owner@example.test"
const LOGO = "https://logo.example.test/leaf.png"
/** A 1 × 1 green PNG, answered for the logo's address (nothing leaves the machine). */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64"
)

/** An access token of a new API key, made through the dashboard's API with the page's session. */
const accessToken = async (page: Page) => {
  const me = await (await page.request.get(`${origin}/dashboard/api/session`)).json() as { csrf_token: string }
  const made = await (await page.request.post(`${origin}/dashboard/api/keys`, {
    headers: { "x-csrf-token": me.csrf_token }
  })).json() as { client_id: string; client_secret: string }
  const issued = await token(made.client_id, made.client_secret)
  expect(issued.status).toBe(200)
  return issued.access!
}

/** Reloads the Overview until the Issues feed has (or has not) a row naming the connection. */
const issueRow = async (page: Page, connectionId: string, present: boolean) => {
  const row = page.getByRole("region", { name: "Issues" }).getByRole("row").filter({ hasText: connectionId })
  for (let i = 0; i < 40; i++) {
    await page.getByRole("heading", { level: 2, name: /^Issues/ }).waitFor()
    if (((await row.count()) > 0) === present) return row
    await page.waitForTimeout(250)
    await page.reload()
    await heading(page, "Overview")
  }
  throw new Error(`the Issues feed ${present ? "never listed" : "still lists"} ${connectionId}`)
}

describe.sequential("Connect and Sandbox pages", () => {
  it("both pages are served under the CSP, which lets the dashboard frame its own origin only", async () => {
    for (const path of ["/dashboard/connect", "/dashboard/sandbox"]) {
      const response = await fetch(`${origin}${path}`)
      expect(response.status, path).toBe(200)
      expect(response.headers.get("content-security-policy"), path).toBe(CSP)
      expect(response.headers.get("x-frame-options"), path).toBe("DENY")
    }
    // the Connect page lets this origin frame it (and sets no X-Frame-Options)
    const connect = await fetch(`${origin}/connect?link_token=link-sandbox-x`)
    expect(connect.headers.get("content-security-policy")).toMatch(/frame-ancestors 'self'/)
    expect(connect.headers.get("x-frame-options")).toBeNull()
  })

  for (const viewport of viewports) {
    it(`at ${viewport.width} px: Connect settings and preview; sandbox connection, scenarios, faults, reset`, async () => {
      const { context, page, problems } = await open(viewport)
      await context.route(
        "https://logo.example.test/**",
        (route) => route.fulfill({ status: 200, contentType: "image/png", body: PNG })
      )
      const name = `Green Leaf ${viewport.name}`
      try {
        if (viewport === viewports[0]) {
          await accept(page, ownerLink, OWNER)
        } else {
          await page.goto(`${origin}/dashboard`)
          await heading(page, "Sign in")
          await signIn(page, OWNER)
        }

        // --- Connect: the API's words for an http logo; then a name and a logo, saved
        await nav(page, "Connect")
        await check(page, "connect")
        await page.getByLabel("Name shown in Connect").fill(name)
        await page.getByLabel("Logo URL").fill("http://logo.example.test/leaf.png")
        await page.getByRole("button", { name: "Save" }).click()
        await page.getByRole("alert").filter({ hasText: "logo_url must be an https URL" }).waitFor()
        // by keyboard: the logo typed over, and Enter saves
        await page.getByLabel("Logo URL").focus()
        await page.keyboard.press("ControlOrMeta+A")
        await page.keyboard.type(LOGO)
        await page.keyboard.press("Enter")
        await page.getByRole("status").filter({ hasText: "Saved." }).waitFor()
        expect(await page.getByRole("alert").count()).toBe(0)

        // --- the preview: the real widget, with this name and this logo
        await page.getByRole("button", { name: "Open preview" }).click()
        const frame = page.frameLocator("iframe[title=\"Connect preview\"]")
        await frame.getByRole("heading", { level: 1 }).waitFor()
        await frame.locator(".brand span").filter({ hasText: name }).waitFor()
        expect((await frame.locator(".brand span").innerText()).trim()).toBe(name)
        const logo = frame.locator(".brand img")
        await logo.waitFor()
        expect(await logo.getAttribute("src")).toBe(LOGO)
        await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1)
        // the widget's first step, ready to link (a sandbox link token: the http tests check its environment)
        expect(await frame.locator("body").innerText()).toContain("Step 1 of 3")
        await check(page, "connect with its preview")
        await shoot(page, "connect", viewport)

        // --- Sandbox: a wrong test login is refused in the API's words
        await nav(page, "Sandbox")
        await check(page, "sandbox")
        await page.getByLabel("Provider").selectOption("provider_b")
        await page.getByLabel("State", { exact: true }).selectOption("HI")
        await page.getByLabel("Sandbox login").selectOption("bad")
        await page.getByRole("button", { name: "Make connection" }).click()
        const refused = page.getByRole("alert")
        await refused.waitFor()
        const refusal = await refused.innerText()
        expect(refusal).not.toMatch(/Something went wrong|could not be read/)
        expect(refusal.length).toBeGreaterThan(10)

        // --- a sandbox connection with the good login
        await page.getByLabel("Sandbox login").selectOption("good")
        await page.getByLabel("External ID (optional)").fill(`tools-${viewport.name}`)
        await page.getByRole("button", { name: "Make connection" }).click()
        const made = page.getByRole("status").filter({ hasText: /^conn_\w+ was made/ })
        await made.waitFor()
        const connectionId = /^(conn_\w+)/.exec(await made.innerText())![1]!
        await page.getByRole("region", { name: "Sandbox connections" }).getByRole("row").filter({
          hasText: connectionId
        }).waitFor()
        expect(await page.getByLabel("Connection", { exact: true }).inputValue()).toBe(connectionId)
        const status = page.locator("#sb-status")
        await expect.poll(() => status.innerText()).toBe("active")

        // --- a scenario: its event is shown
        // by keyboard: the scenario picked by typing its name, Enter on Run scenario
        await page.getByLabel("Scenario", { exact: true }).focus()
        await page.keyboard.type("transfer_arrived")
        expect(await page.getByLabel("Scenario", { exact: true }).inputValue()).toBe("transfer_arrived")
        await page.getByRole("button", { name: "Run scenario" }).focus()
        await page.keyboard.press("Enter")
        await page.getByRole("status").filter({ hasText: /^transfer_arrived ran: event \S+ \(transfer\.arrived\)/ })
          .waitFor()
        expect(await page.locator("pre.body").innerText()).toContain(connectionId)
        await check(page, "sandbox with an event")
        await page.evaluate(() => window.scrollTo(0, 0))
        await shoot(page, "sandbox", viewport)

        // --- connection_login_required: the connection is in error; a reset brings it back
        await page.getByLabel("Scenario", { exact: true }).selectOption("connection_login_required")
        await page.getByRole("button", { name: "Run scenario" }).click()
        await page.getByRole("status").filter({ hasText: /^connection_login_required ran/ }).waitFor()
        await expect.poll(() => status.innerText()).toBe("error")
        await page.getByRole("button", { name: "Reset…" }).click()
        await page.getByRole("button", { name: "Yes, reset" }).click()
        await page.getByRole("status").filter({ hasText: `${connectionId} was reset` }).waitFor()
        await expect.poll(() => status.innerText()).toBe("active")

        // --- an expired_login fault, met by a /v1 read: the connection is under Issues
        await page.getByLabel("Fault", { exact: true }).selectOption("expired_login")
        await page.getByRole("button", { name: "Set fault" }).click()
        await page.getByRole("status").filter({ hasText: "Fault set: expired_login" }).waitFor()
        await expect.poll(() => page.locator("#sb-fault").innerText()).toBe("expired_login")
        await check(page, "sandbox with a fault")
        const access = await accessToken(page)
        const read = await v1("GET", `/v1/connections/${connectionId}/facilities`, access)
        expect(read.status).toBe(409)
        expect(read.body.error.code).toBe("connection_login_required")
        await nav(page, "Overview")
        const issue = await issueRow(page, connectionId, true)
        expect(await issue.innerText()).toMatch(/critical[\s\S]*relink/)

        // --- cleared: the connection is active again, and the issue is gone
        await nav(page, "Sandbox")
        await page.getByLabel("Connection", { exact: true }).selectOption(connectionId)
        await expect.poll(() => page.locator("#sb-fault").innerText()).toBe("expired_login")
        await page.getByRole("button", { name: "Clear fault" }).click()
        await page.getByRole("status").filter({ hasText: "Fault cleared" }).waitFor()
        await expect.poll(() => page.locator("#sb-fault").innerText()).toBe("none")
        await expect.poll(() => status.innerText()).toBe("active")
        await nav(page, "Overview")
        await issueRow(page, connectionId, false)
        await check(page, "overview without the issue")

        // --- a viewer reads both pages and finds nothing that changes anything
        const me = await (await page.request.get(`${origin}/dashboard/api/session`)).json() as { csrf_token: string }
        const invitation = await (await page.request.post(`${origin}/dashboard/api/invitations`, {
          headers: { "x-csrf-token": me.csrf_token },
          data: { email: `tools-viewer-${viewport.name}@example.test`, role: "viewer" }
        })).json() as { link: string }
        const asViewer = await open(viewport)
        try {
          await accept(asViewer.page, invitation.link, `tools-viewer-${viewport.name}@example.test`)
          await nav(asViewer.page, "Connect")
          await asViewer.page.getByText(name, { exact: true }).waitFor()
          expect(await asViewer.page.getByRole("button").filter({ hasText: /Save|preview/ }).count()).toBe(0)
          expect(await asViewer.page.getByRole("textbox").count()).toBe(0)
          await check(asViewer.page, "connect as a viewer")
          await nav(asViewer.page, "Sandbox")
          await asViewer.page.getByRole("region", { name: "Sandbox connections" }).getByRole("row").filter({
            hasText: connectionId
          }).waitFor()
          await asViewer.page.getByLabel("Connection", { exact: true }).selectOption(connectionId)
          await expect.poll(() => asViewer.page.locator("#sb-fault").innerText()).toBe("none")
          expect(
            await asViewer.page.getByRole("button").filter({ hasText: /Make connection|Run scenario|fault|Reset/ })
              .count()
          ).toBe(0)
          await check(asViewer.page, "sandbox as a viewer")
          expect(asViewer.problems).toEqual([])
        } finally {
          await asViewer.context.close()
        }

        // the one refusal the test asked for (the wrong test login, 400) is the API answering
        expect(problems, problems.join("\n")).toEqual([
          "Failed to load resource: the server responded with a status of 400 (Bad Request)"
        ])
      } catch (error) {
        await page.screenshot({ path: join(shots, `tools-failure-${viewport.name}.png`) }).catch(() => {})
        throw new Error(
          `${String(error)}\n--- the page said:\n${await page.locator("main").innerText().catch(() => "?")}`
        )
      } finally {
        await context.close()
      }
    })
  }
})
