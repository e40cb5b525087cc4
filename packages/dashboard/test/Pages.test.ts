/**
 * The dashboard's pages in real Chromium (playwright-core driving Debian's /usr/bin/chromium,
 * never a downloaded browser) against the built server (`packages/http/dist/main.js`, a child
 * process on a free port with a data folder of its own, on SQLite, or on a fresh Postgres schema
 * under `npm run test:pg`), at 1280 × 800 and at 375 × 740:
 *
 * - the first owner's link (from the start banner) is accepted, which signs in;
 * - an API key is made, its secret shown once, and it works at `POST /v1/oauth/token`;
 * - a failed `/v1` request (a sandbox login expired by a fault) is found in Logs, and its page
 *   shows its error answer and the upstream call behind it, with BioTrack's errorcode 63;
 * - the Overview counts it, shows the webhook backlog and the sync now as the API counts them, and
 *   lists the refused login among its issues;
 * - a sandbox connection (whose `external_id` is markup, shown as text) is listed, filtered and
 *   deleted after a confirmation;
 * - the key is rolled (the old secret still works during the overlap) and revoked (its secrets and
 *   its access token stop at once);
 * - a viewer is invited by link, signs in, and sees no button that makes a secret;
 * - TOTP: enrolment's QR code, a code turns it on, sign-in then asks for a code, and off again;
 * - sign-out and sign-in.
 *
 * The served page has no inline script or style, under the strict CSP, for every client route;
 * `/dashboard/api/…` stays the API's (JSON 404, 405).
 *
 * - markup and `javascript:` in a logged body and path are text in Logs and on the request page;
 * - a roll with the shortest overlap: the old secret answers 401 at once, the new one 200;
 * - a member invited by keyboard joins, has their role changed and is removed (both audited);
 * - a new organisation (the CLI's create-org and invite) whose developer accepts the link, makes a
 *   key and a sandbox connection on the pages, and reads a facility's packages with that key.
 *
 * Keyboard: a new page focuses its heading, and Tab and Shift+Tab reach the page's button, the
 * navigation and the skip link; `check` asserts every control is reachable by Tab (`reachable`);
 * the Logs filter, a roll, the invitation and a new key are driven by keyboard.
 *
 * On every page: no sideways scrolling, no axe-core violation of impact serious or critical, and
 * no CSP refusal (the pages run under `script-src 'self'; style-src 'self'`). Screenshots go to
 * packages/dashboard/build/screenshots; with TRACEBRIDGE_SCREENSHOTS=docs they also replace the
 * ones in docs/images/dashboard/ (see docs/dashboard.md):
 *
 *   TRACEBRIDGE_SCREENSHOTS=docs npx vitest run packages/dashboard/test/Pages.test.ts
 */
import { createHmac } from "node:crypto"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import {
  accept,
  admin,
  check,
  CSP,
  heading,
  nav,
  open,
  origin,
  ownerLink,
  PASSWORD,
  reachable,
  shoot,
  shots,
  signIn,
  signOut,
  startServer,
  token,
  v1,
  viewports
} from "./support/Browser.js"

startServer()

/** RFC 6238 (SHA-1, 6 digits, 30 s) for a base32 secret, `steps` time steps from now. */
const totp = (base32: string, steps: number) => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
  let bits = ""
  for (const char of base32.replace(/=+$/, "").toUpperCase()) {
    bits += alphabet.indexOf(char).toString(2).padStart(5, "0")
  }
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((byte) => parseInt(byte, 2)))
  const counter = Buffer.alloc(8)
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30_000) + steps))
  const mac = createHmac("sha1", key).update(counter).digest()
  const offset = mac[mac.length - 1]! & 0xf
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, "0")
}

/** The invitation links the first width's owner makes for the next width's owner. */
const nextOwnerLinks: Array<string> = []

describe.sequential("dashboard pages", () => {
  it("every client route answers the built page under the strict CSP; the API's unknown paths stay JSON 404s", async () => {
    for (
      const path of [
        "/dashboard",
        "/dashboard/",
        "/dashboard/accept?token=tbi_x",
        "/dashboard/keys",
        "/dashboard/no/such/page"
      ]
    ) {
      const response = await fetch(`${origin}${path}`)
      expect(response.status, path).toBe(200)
      expect(response.headers.get("content-type"), path).toMatch(/^text\/html/)
      expect(response.headers.get("content-security-policy"), path).toBe(CSP)
      expect(response.headers.get("referrer-policy"), path).toBe("no-referrer")
      expect(response.headers.get("cache-control"), path).toBe("no-cache")
      const html = await response.text()
      // no inline script or style: scripts by file, style sheets by link, no style attribute
      expect(html, path).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
      expect(html, path).not.toMatch(/<style|\sstyle=/)
      expect(html, path).not.toContain("tbi_x")
      const assets = [...html.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]!)
      expect(assets.some((a) => a.endsWith(".js")) && assets.some((a) => a.endsWith(".css")), path).toBe(true)
      for (const asset of assets) {
        const file = await fetch(`${origin}${asset}`)
        expect(file.status, asset).toBe(200)
        expect(file.headers.get("content-type"), asset).toMatch(
          asset.endsWith(".js") ? /^text\/javascript/ : /^text\/css/
        )
        expect(file.headers.get("cache-control"), asset).toBe("public, max-age=31536000, immutable")
        expect(file.headers.get("x-content-type-options"), asset).toBe("nosniff")
      }
    }
    for (const path of ["/dashboard/api/unknown", "/dashboard/api", "/dashboard/assets/missing.js"]) {
      const response = await fetch(`${origin}${path}`)
      expect(response.status, path).toBe(404)
      expect(response.headers.get("content-type"), path).toMatch(/^application\/json/)
      expect((await response.json() as any).error.type, path).toBe("not_found_error")
    }
    // a known API path with another method is still the API's 405
    const wrong = await fetch(`${origin}/dashboard/api/keys/tb_client_x/roll`)
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get("allow")).toBe("POST")
  })

  for (const viewport of viewports) {
    it(`at ${viewport.width} px: keys, logs, connections, team, account, a viewer, sign-in`, async () => {
      const { context, page, problems } = await open(viewport)
      const owner = `owner-${viewport.name}@example.test`
      const viewer = `viewer-${viewport.name}@example.test`
      try {
        // --- accept the invitation (the banner's first-owner link, or one the first owner made)
        const link = viewport === viewports[0] ? ownerLink : nextOwnerLinks.shift()!
        await page.goto(link)
        await heading(page, "Accept an invitation")
        await check(page, "accept")
        await shoot(page, "accept", viewport)
        await accept(page, link, owner)

        // --- API keys: create; the secret is shown once and works
        await check(page, "keys")
        // the keyboard check finds a control that Tab skips
        await page.getByRole("button", { name: "Create API key" }).evaluate((b) => b.setAttribute("tabindex", "-1"))
        await expect(reachable(page, "keys, a skipped button")).rejects.toThrow(/not reachable by Tab/)
        await page.getByRole("button", { name: "Create API key" }).evaluate((b) => b.removeAttribute("tabindex"))
        await page.getByRole("heading", { level: 1 }).focus()
        // by keyboard: a new page focuses its heading; Tab goes on to the page's button, and back
        // (Shift+Tab) through the navigation to the skip link
        const focused = () => page.evaluate(() => document.activeElement?.textContent ?? "")
        await page.keyboard.press("Tab")
        expect(await focused()).toBe("Create API key")
        const passed: Array<string> = []
        for (let i = 0; i < 12 && passed.at(-1) !== "Skip to content"; i++) {
          await page.keyboard.press("Shift+Tab")
          passed.push(await focused())
        }
        expect(passed).toEqual([
          "Sign out",
          "Account",
          "Team",
          "Sandbox",
          "Connect",
          "Logs",
          "Webhooks",
          "Connections",
          "API keys",
          "Overview",
          "Skip to content"
        ])
        await page.getByRole("button", { name: "Create API key" }).click()
        const secretCode = page.locator("#revealed-secret")
        await secretCode.waitFor()
        const secret = (await secretCode.innerText()).trim()
        const clientId = (await page.getByRole("region", { name: "New secret" }).locator("code").first().innerText())
          .trim()
        expect(secret).toMatch(/^tb_secret_/)
        await check(page, "keys with a secret")
        await shoot(page, "keys-secret", viewport, [secretCode])
        const first = await token(clientId, secret)
        expect(first.status).toBe(200)
        await page.getByRole("button", { name: "Copy secret" }).click()
        await page.getByText("Copied.").waitFor()
        await page.getByRole("button", { name: "I have copied it" }).click()
        await page.reload()
        await heading(page, "API keys")
        await page.getByRole("cell", { name: clientId }).waitFor()
        expect(await page.content()).not.toContain(secret)
        await shoot(page, "keys", viewport)

        // --- /v1 traffic: a sandbox BioTrack-style connection whose external_id is markup, whose
        // login then expires (a sandbox fault): its read fails with the state system's errorcode 63
        const access = first.access!
        const externalId = `<script>alert("x")</script> store-${viewport.name}`
        const made = await v1("POST", "/v1/sandbox/public_token/create", access, {
          provider: "provider_b",
          state: "IL",
          external_id: externalId
        })
        expect(made.status).toBe(200)
        const exchanged = await v1("POST", "/v1/link/token/exchange", access, {
          public_token: made.body.data.public_token
        })
        expect(exchanged.status).toBe(200)
        const connectionId = exchanged.body.data.connection_id as string
        expect((await v1("PUT", `/v1/sandbox/${connectionId}/faults`, access, { kind: "expired_login" })).status).toBe(
          200
        )
        const failed = await v1("GET", `/v1/connections/${connectionId}/facilities`, access)
        expect(failed.status).toBe(409)
        expect(failed.body.error.code).toBe("connection_login_required")

        // --- Logs: find the failed request and open its page, with its upstream calls
        await nav(page, "Logs")
        await page.getByLabel("Status", { exact: true }).selectOption("4xx")
        await page.getByLabel("Connection", { exact: true }).fill(connectionId)
        // the row of this connection's failed read (the list names each request's connection; the
        // other width's connection failed the same way)
        const entry = page.getByRole("region", { name: "Requests" }).getByRole("row")
          .filter({ has: page.getByRole("link", { name: `Connection ${connectionId}` }) })
          .filter({ has: page.getByRole("link", { name: /\/v1\/connections\/:connection_id\/facilities 409$/ }) })
          .first()
        const row = entry.getByRole("link", { name: /\/v1\/connections\/:connection_id\/facilities 409$/ })
        for (let i = 0; i < 40 && (await row.count()) === 0; i++) {
          await page.getByRole("button", { name: "Filter" }).click()
          await page.waitForTimeout(250)
        }
        await row.first().waitFor()
        // the list's principal (the key that called) and connection (linked to its page)
        // (each cut short by its cell's width, the whole id in its text and title)
        expect(await entry.locator(`code[title="${clientId}"]`).innerText()).toBe(clientId)
        expect(await entry.getByRole("link", { name: `Connection ${connectionId}` }).getAttribute("title")).toBe(
          connectionId
        )
        expect(await entry.getByRole("link", { name: `Connection ${connectionId}` }).getAttribute("href")).toBe(
          `/dashboard/connections/${connectionId}`
        )
        await check(page, "logs")
        await shoot(page, "logs", viewport)
        await row.first().click()
        await heading(page, /^Request req_/)
        await page.getByRole("heading", { name: "Error answer" }).waitFor()
        expect(await page.locator("pre.body").last().innerText()).toContain("connection_login_required")
        // the state system's own answer behind the 409: BioTrack's errorcode 63
        const upstream = page.getByRole("region", { name: "Upstream calls" }).getByRole("row").filter({
          hasText: "provider_b"
        })
        expect(await upstream.count()).toBeGreaterThan(0)
        const codes = await upstream.evaluateAll((rows) => rows.map((r) => r.lastElementChild!.textContent))
        expect(codes, (await upstream.allInnerTexts()).join("\n")).toContain("63")
        await check(page, "a request's page")
        await page.getByRole("heading", { name: "Error answer" }).evaluate((h) => h.scrollIntoView({ block: "start" }))
        await shoot(page, "log-detail", viewport)

        // --- markup in a log entry is text: a refused body, and a path naming no connection
        const markup = "<script>alert(1)</script>"
        const refusedBody = await v1("POST", "/v1/sandbox/public_token/create", access, {
          provider: markup,
          state: "javascript:alert(1)",
          external_id: `${markup} javascript:alert(1)`
        })
        expect(refusedBody.status).toBe(400)
        const unknownPath = await v1("GET", "/v1/connections/javascript:alert(1)", access)
        expect(unknownPath.status).toBe(404)
        // by keyboard: the Logs filter (the route typed, Enter), then the request opened with Enter
        await nav(page, "Logs")
        await page.getByRole("button", { name: "Clear" }).click()
        await page.getByLabel("Route", { exact: true }).focus()
        await page.keyboard.type("/v1/sandbox/public_token/create")
        const markupRow = page.getByRole("link", { name: /\/v1\/sandbox\/public_token\/create 400$/ })
        for (let i = 0; i < 40 && (await markupRow.count()) === 0; i++) {
          await page.getByLabel("Route", { exact: true }).focus()
          await page.keyboard.press("Enter")
          await page.waitForTimeout(250)
        }
        await markupRow.first().focus()
        await page.keyboard.press("Enter")
        await heading(page, /^Request req_/)
        await page.getByRole("heading", { name: "Error answer" }).waitFor()
        const bodies = await page.locator("pre.body").allInnerTexts()
        expect(bodies[0]).toContain(markup)
        expect(bodies[0]).toContain("javascript:alert(1)")
        expect(await page.locator("main script").count()).toBe(0)
        expect(await page.locator("a[href^=\"javascript:\"]").count()).toBe(0)
        await check(page, "a request's page, its body markup")
        // the 404 whose path holds javascript: (its path shown as text, no link made of it)
        await nav(page, "Logs")
        await page.getByLabel("Route", { exact: true }).fill("/v1/connections/:connection_id")
        await page.getByLabel("Status", { exact: true }).selectOption("4xx")
        const notFound = page.getByRole("link", { name: /\/v1\/connections\/:connection_id 404$/ })
        for (let i = 0; i < 40 && (await notFound.count()) === 0; i++) {
          await page.getByRole("button", { name: "Filter" }).click()
          await page.waitForTimeout(250)
        }
        expect(await page.locator("main script").count()).toBe(0)
        expect(await page.locator("a[href^=\"javascript:\"]").count()).toBe(0)
        await notFound.first().click()
        await heading(page, /^Request req_/)
        await page.locator("main code").filter({ hasText: "GET /v1/connections/javascript:alert(1)" }).waitFor()
        expect(await page.locator("main script").count()).toBe(0)
        expect(await page.locator("a[href^=\"javascript:\"]").count()).toBe(0)

        // --- Overview: the last day's requests count the failed read; the Issues feed is there
        await nav(page, "Overview")
        const requests = page.getByRole("region", { name: "Requests, last 24 hours" })
        await requests.waitFor()
        const figure = async (name: string) =>
          Number(
            await requests.locator("div").filter({ has: page.getByText(name, { exact: true }) }).locator("dd")
              .innerText()
          )
        expect(await figure("4xx")).toBeGreaterThanOrEqual(1)
        expect(await figure("all")).toBeGreaterThanOrEqual(await figure("4xx") + await figure("2xx"))
        // the webhook backlog now (no endpoint, so nothing waits) and the sync now, as the API counts them
        const figures = (region: string) =>
          page.getByRole("region", { name: region }).locator("dl > div").evaluateAll((divs) =>
            Object.fromEntries(
              divs.map((d) => [d.querySelector("dt")!.textContent, d.querySelector("dd")!.textContent])
            )
          )
        expect(await figures("Webhook backlog, now")).toEqual({
          pending: "0",
          "oldest pending": "none",
          "dead-lettered": "0"
        })
        let shown: Record<string, string | null> = {}
        let counted: { lag_seconds: number | null; live: number; backfilling: number; failing: number } | undefined
        // the sync may move between the page's read and this one: read both again until they agree
        for (let i = 0; i < 20; i++) {
          shown = await figures("Sync, now")
          counted = await page.evaluate(async () => (await (await fetch("/dashboard/api/overview")).json()).sync)
          if (
            shown.live === String(counted!.live) && shown.backfilling === String(counted!.backfilling) &&
            shown.failing === String(counted!.failing) && (shown.lag === "none") === (counted!.lag_seconds === null)
          ) break
          await page.reload()
          await page.getByRole("region", { name: "Sync, now" }).waitFor()
        }
        expect(shown).toEqual({
          lag: counted!.lag_seconds === null ? "none" : expect.stringMatching(/^\d+ (s|min)$|^\d+ h/),
          live: String(counted!.live),
          backfilling: String(counted!.backfilling),
          failing: String(counted!.failing)
        })
        await page.getByRole("heading", { level: 2, name: /^Issues \(\d+\)$/ }).waitFor()
        // the refused login is an open issue, naming the connection and saying to relink it
        const issue = page.getByRole("region", { name: "Issues" }).getByRole("row")
          .filter({ hasText: connectionId })
        await issue.waitFor()
        expect(await issue.innerText()).toMatch(/critical[\s\S]*relink/)
        await check(page, "overview")
        await shoot(page, "overview", viewport)

        // --- Connections: filter, the markup shown as text, delete after a confirmation
        await nav(page, "Connections")
        await page.getByLabel("External ID", { exact: true }).fill(externalId)
        await page.getByRole("button", { name: "Filter" }).click()
        const connection = page.getByRole("row")
          .filter({ hasText: connectionId })
        await connection.waitFor()
        expect(await connection.getByRole("cell").nth(1).innerText()).toBe(externalId)
        await check(page, "connections")
        await shoot(page, "connections", viewport)
        await connection.getByRole("button", { name: "Delete" }).click()
        await connection.getByRole("button", { name: "Yes, delete" }).click()
        await page.getByRole("status").filter({ hasText: "was deleted" }).waitFor()
        await connection.getByText("inactive").waitFor()

        // --- roll (the old secret works during the overlap), then revoke (everything stops)
        await nav(page, "API keys")
        const keyRow = page.getByRole("row").filter({ hasText: clientId })
        await keyRow.getByRole("button", { name: "Roll…" }).click()
        await keyRow.getByLabel("Old secret keeps working").selectOption({ label: "1 hour" })
        await check(page, "keys, rolling")
        await keyRow.getByRole("button", { name: "Roll secret" }).click()
        await page.getByRole("region", { name: "New secret" }).getByText("Old secret works until").waitFor()
        const rolled = (await page.locator("#revealed-secret").innerText()).trim()
        expect(rolled).not.toBe(secret)
        expect((await token(clientId, secret)).status).toBe(200)
        expect((await token(clientId, rolled)).status).toBe(200)
        await page.getByRole("button", { name: "I have copied it" }).click()
        // rolled again with the shortest overlap (by keyboard): the old secret answers 401 at once
        await keyRow.getByRole("button", { name: "Roll…" }).focus()
        await page.keyboard.press("Enter")
        await keyRow.getByLabel("Old secret keeps working").selectOption({ label: "Stops now" })
        await keyRow.getByRole("button", { name: "Roll secret" }).focus()
        await page.keyboard.press("Enter")
        await page.locator("#revealed-secret").waitFor()
        const rolledNow = (await page.locator("#revealed-secret").innerText()).trim()
        expect(rolledNow).not.toBe(rolled)
        expect((await token(clientId, rolled)).status).toBe(401)
        expect((await token(clientId, rolledNow)).status).toBe(200)
        await page.getByRole("button", { name: "I have copied it" }).click()
        await keyRow.getByRole("button", { name: "Revoke" }).click()
        await keyRow.getByRole("button", { name: "Yes, revoke" }).click()
        await page.getByRole("status").filter({ hasText: "is revoked" }).waitFor()
        expect((await token(clientId, rolledNow)).status).toBe(401)
        expect((await token(clientId, rolled)).status).toBe(401)
        expect((await token(clientId, secret)).status).toBe(401)
        expect((await v1("GET", "/v1/connections", access)).status).toBe(401)

        // --- Team: invite a viewer (and, on the first width, the next width's owner)
        await nav(page, "Team")
        await check(page, "team")
        const invite = async (email: string, role: string) => {
          await page.getByLabel("E-mail").fill(email)
          await page.getByLabel("Role", { exact: true }).selectOption(role)
          await page.getByRole("button", { name: "Make invitation link" }).click()
          const shown = page.locator("#invitation-link")
          await shown.waitFor()
          const text = (await shown.innerText()).trim()
          expect(text).toMatch(new RegExp(`^${origin}/dashboard/accept\\?token=tbi_`))
          return text
        }
        // by keyboard: a member invited (the e-mail typed, the role picked, Enter on the button),
        // who joins; then their role is changed (viewer to developer) and they are removed
        const member = `member-${viewport.name}@example.test`
        await page.getByLabel("E-mail").focus()
        await page.keyboard.type(member)
        await page.keyboard.press("Tab")
        await page.keyboard.type("viewer")
        expect(await page.getByLabel("Role", { exact: true }).inputValue()).toBe("viewer")
        await page.keyboard.press("Tab")
        await page.keyboard.press("Enter")
        await page.locator("#invitation-link").waitFor()
        const memberLink = (await page.locator("#invitation-link").innerText()).trim()
        await page.getByRole("button", { name: "Done" }).click()
        const joining = await open(viewport)
        try {
          await accept(joining.page, memberLink, member)
          expect(joining.problems).toEqual([])
        } finally {
          await joining.context.close()
        }
        await page.reload()
        await heading(page, "Team")
        const memberRow = page.getByRole("region", { name: "Members" }).getByRole("row").filter({ hasText: member })
        await memberRow.getByRole("cell", { name: "viewer", exact: true }).waitFor()
        await memberRow.getByRole("combobox", { name: `Role of ${member}` }).selectOption("developer")
        await memberRow.getByRole("button", { name: "Change role" }).click()
        await page.getByRole("status").filter({ hasText: `${member} is now developer.` }).waitFor()
        await memberRow.getByRole("cell", { name: "developer", exact: true }).waitFor()
        await memberRow.getByRole("button", { name: "Remove" }).click()
        await memberRow.getByRole("group", { name: `Remove ${member} from the organisation?` }).waitFor()
        await memberRow.getByRole("button", { name: "Yes, remove" }).click()
        await page.getByRole("status").filter({ hasText: `${member} was removed.` }).waitFor()
        await memberRow.waitFor({ state: "detached" })
        await page.reload()
        await heading(page, "Team")
        const audit = page.getByRole("region", { name: "Audit log" })
        await audit.getByRole("cell", { name: "member.role_changed" }).first().waitFor()
        await audit.getByRole("cell", { name: "member.removed" }).first().waitFor()
        expect(await audit.getByRole("row").filter({ hasText: "member.role_changed" }).first().innerText()).toMatch(
          new RegExp(`${member}[\\s\\S]*developer`)
        )
        expect(await audit.getByRole("row").filter({ hasText: "member.removed" }).first().innerText()).toContain(member)
        const viewerLink = await invite(viewer, "viewer")
        await check(page, "team with a link")
        await shoot(page, "team", viewport, [page.locator("#invitation-link")])
        await page.getByRole("button", { name: "Done" }).click()
        if (viewport === viewports[0]) {
          nextOwnerLinks.push(await invite(`owner-${viewports[1]!.name}@example.test`, "owner"))
          await page.getByRole("button", { name: "Done" }).click()
        }
        await page.getByRole("cell", { name: "member.invited" }).first().waitFor()

        // --- Account: TOTP enrolment shows a QR code drawn here and the URI as text; a code turns it on.
        // A code works once, and only a later step's after it: on, the previous step's code (one
        // step of drift is allowed); sign-in, the current one; off, the next one.
        await nav(page, "Account")
        await page.getByRole("button", { name: "Set up two-factor" }).click()
        await page.getByRole("img", { name: /QR code/ }).waitFor()
        expect(await page.locator("code", { hasText: "otpauth://totp/" }).count()).toBe(1)
        const totpSecret = (await page.locator("code.wrap").last().innerText()).trim()
        expect(totpSecret).toMatch(/^[A-Z2-7]+=*$/)
        await check(page, "account")
        await shoot(page, "account", viewport, [page.locator("code.wrap"), page.locator("img.qr")])
        await page.getByLabel("Code from your authenticator app").fill(totp(totpSecret, -1))
        await page.getByRole("button", { name: "Turn on two-factor" }).click()
        await page.getByRole("status").filter({ hasText: "Two-factor sign-in is on." }).waitFor()

        // --- sign out; the viewer accepts, and sees no secret-making button
        await signOut(page)
        await check(page, "sign-in")
        await shoot(page, "sign-in", viewport)
        await accept(page, viewerLink, viewer)
        await page.getByRole("cell", { name: clientId }).waitFor()
        expect(await page.getByRole("button", { name: "Create API key" }).count()).toBe(0)
        expect(await page.getByRole("button", { name: /Roll|Revoke/ }).count()).toBe(0)
        expect(await page.content()).not.toMatch(/tb_secret_/)
        await check(page, "keys as a viewer")
        await shoot(page, "keys-viewer", viewport)
        await nav(page, "Connections")
        await page.getByRole("row")
          .filter({ hasText: connectionId }).waitFor()
        expect(await page.getByRole("button", { name: "Delete" }).count()).toBe(0)
        await signOut(page)

        // --- the owner signs in again: the page asks for the code, then turns two-factor off
        await page.getByLabel("E-mail").fill(owner)
        await page.getByLabel("Password").fill(PASSWORD)
        await page.getByRole("button", { name: "Sign in" }).click()
        const code = page.getByLabel("Code from your authenticator app")
        await code.waitFor()
        expect(await page.getByRole("alert").count()).toBe(0)
        await check(page, "sign-in, the code")
        await code.fill(totp(totpSecret, 0))
        await page.getByRole("button", { name: "Sign in" }).click()
        await heading(page, "Overview")
        await nav(page, "Account")
        await page.getByLabel("Code from your authenticator app").fill(totp(totpSecret, 1))
        await page.getByRole("button", { name: "Turn off two-factor" }).click()
        await page.getByRole("status").filter({ hasText: "Two-factor sign-in is off." }).waitFor()
        await signOut(page)
        await signIn(page, owner)
        await signOut(page)

        expect(problems).toEqual([])
      } catch (error) {
        await page.screenshot({ path: join(shots, `failure-${viewport.name}.png`) }).catch(() => {})
        throw new Error(
          `${String(error)}\n--- the page said:\n${await page.locator("main").innerText().catch(() => "?")}`
        )
      } finally {
        await context.close()
      }
    })
  }
  for (const viewport of viewports) {
    it(`at ${viewport.width} px: a new organisation's developer, invited by the CLI, makes a key and a sandbox connection and reads its packages`, async () => {
      const { context, page, problems } = await open(viewport)
      const name = `Fresh Farms ${viewport.name}`
      const developer = `dev-${viewport.name}@fresh.example.test`
      try {
        // the operator makes the organisation and invites its developer (the CLI prints the link)
        const organisationId = admin("create-org", name).trim().split("\t")[0]!
        expect(organisationId).toMatch(/^org_/)
        const printed = admin("invite", organisationId, developer, "--role", "developer")
        const link = new RegExp(`${origin}/dashboard/accept\\?token=tbi_[A-Za-z0-9_-]+`).exec(printed)![0]
        await accept(page, link, developer)
        expect(await page.locator("header .who").innerText()).toContain(`${name} · ${developer} (developer)`)

        // a key, on the API Keys page (by keyboard: focus the button, Enter)
        await page.getByRole("button", { name: "Create API key" }).focus()
        await page.keyboard.press("Enter")
        await page.locator("#revealed-secret").waitFor()
        const secret = (await page.locator("#revealed-secret").innerText()).trim()
        const clientId = (await page.getByRole("region", { name: "New secret" }).locator("code").first().innerText())
          .trim()
        await page.getByRole("button", { name: "I have copied it" }).click()

        // a sandbox connection, on the Sandbox page (by keyboard: the login picked, Enter on the button)
        await nav(page, "Sandbox")
        await page.getByLabel("Sandbox login").selectOption("good")
        await page.getByRole("button", { name: "Make connection" }).focus()
        await page.keyboard.press("Enter")
        const made = page.getByRole("status").filter({ hasText: /^conn_\w+ was made/ })
        await made.waitFor()
        const connectionId = /^(conn_\w+)/.exec(await made.innerText())![1]!
        await check(page, "sandbox, a new organisation's connection")

        // with that key: a token, the connection's facilities, and a facility's packages
        const issued = await token(clientId, secret)
        expect(issued.status).toBe(200)
        const facilities = await v1("GET", `/v1/connections/${connectionId}/facilities`, issued.access!)
        expect(facilities.status, JSON.stringify(facilities.body)).toBe(200)
        expect(facilities.body.data.length).toBeGreaterThan(0)
        const packages = await v1(
          "GET",
          `/v1/connections/${connectionId}/facilities/${facilities.body.data[0].id}/packages`,
          issued.access!
        )
        expect(packages.status, JSON.stringify(packages.body)).toBe(200)
        expect(packages.body.data.length).toBeGreaterThan(0)
        // the key sees its own organisation's connections only: this one
        const listed = await v1("GET", "/v1/connections", issued.access!)
        expect(listed.status).toBe(200)
        expect(listed.body.data).toHaveLength(1)
        expect(JSON.stringify(listed.body.data[0])).toContain(connectionId)
        expect(problems).toEqual([])
      } catch (error) {
        await page.screenshot({ path: join(shots, `failure-new-org-${viewport.name}.png`) }).catch(() => {})
        throw new Error(
          `${String(error)}\n--- the page said:\n${await page.locator("main").innerText().catch(() => "?")}`
        )
      } finally {
        await context.close()
      }
    })
  }
})
