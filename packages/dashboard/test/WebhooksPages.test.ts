/**
 * The Webhooks page and a connection's page in real Chromium (playwright-core driving Debian's
 * /usr/bin/chromium) against the built server, at 1280 × 800 and at 375 × 740:
 *
 * - an endpoint is created (its signing secret shown once), sent a test event (received, signed
 *   with that secret), its secret rotated (the new one shown once; both sign during the overlap),
 *   and disabled;
 * - a failing receiver (a loopback server answering 500): the delivery fails, its attempt shows the
 *   500 and the answer's preview as text; the receiver is fixed, Resend, and the receiver gets the
 *   event; a delivery that failed for good is sent again by "Resend failed" over a time range;
 * - a sandbox `expired_login` fault: the connection shows under Issues and on its page (needs a
 *   relink); Relink opens the real Connect widget in update mode, where a wrong login is refused
 *   (the fault stays) and the good one entered again replaces the expired login: the fault is
 *   lifted, the connection is active and its issue closes;
 * - Edit events (by keyboard) adds an event type, and `/v1/webhooks/{id}` agrees;
 * - an endpoint whose URL holds `<script>` and `javascript:` is shown as text;
 * - a viewer sees both pages with no button that changes anything, and never a secret.
 *
 * On every page: no sideways scrolling, no serious or critical axe-core violation, no CSP refusal,
 * and the heading focused on navigation. Screenshots as `Pages.test.ts` makes them
 * (TRACEBRIDGE_SCREENSHOTS=docs also writes docs/images/dashboard/).
 */
import { createHmac } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import {
  check,
  dashboardCall,
  eventually,
  failureShot,
  heading,
  nav as navTo,
  open,
  origin,
  ownerLink,
  PASSWORD,
  shoot,
  startServer,
  token,
  v1,
  viewports
} from "./support/Browser.js"

startServer()

/** Follows a navigation link; the new page's heading has the focus. */
const nav = async (page: Page, name: string) => {
  await navTo(page, name)
  expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("H1")
}

interface Received {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** A webhook receiver on 127.0.0.1 whose answer the test changes (the failing, then fixed, receiver). */
const receiver = async () => {
  const state = { status: 200, body: "ok", received: [] as Array<Received> }
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      state.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
      res.writeHead(state.status, { "content-type": "application/json" }).end(state.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    state,
    url: `http://127.0.0.1:${port}/hooks`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Whether a delivery's `X-Tracebridge-Signature` holds a `v1` made with `secret`. */
const signedWith = (got: Received, secret: string) => {
  const header = String(got.headers["x-tracebridge-signature"] ?? "")
  const t = /t=(\d+)/.exec(header)?.[1]
  const mac = createHmac("sha256", secret).update(`${t}.${got.body}`).digest("hex")
  return header.split(",").includes(`v1=${mac}`)
}

const ownerEmail = "owner@example.test"

/** The owner, signed in: the first width accepts the start banner's link, the second signs in. */
const signInOwner = async (page: Page, first: boolean) => {
  if (first) {
    await page.goto(ownerLink)
    await heading(page, "Accept an invitation")
    await page.getByLabel("E-mail").fill(ownerEmail)
    await page.getByLabel(/^Password/).fill(PASSWORD)
    await page.getByRole("button", { name: "Accept and sign in" }).click()
    await heading(page, "API keys")
  } else {
    await page.goto(`${origin}/dashboard`)
    await heading(page, "Sign in")
    await page.getByLabel("E-mail").fill(ownerEmail)
    await page.getByLabel("Password").fill(PASSWORD)
    await page.getByRole("button", { name: "Sign in" }).click()
    await heading(page, "Overview")
  }
}

describe.sequential("the Webhooks page and a connection's page", () => {
  for (const viewport of viewports) {
    it(`at ${viewport.width} px: endpoints, a failing receiver and Resend, a relink, a viewer`, async () => {
      const { context, page, problems } = await open(viewport, /^40\d$/)
      const hook = await receiver()
      try {
        await signInOwner(page, viewport === viewports[0])
        // an API key, made on the page, for the /v1 calls
        const made = await dashboardCall(page, "POST", "/dashboard/api/keys")
        expect(made.status).toBe(201)
        const access = (await token(made.body.client_id, made.body.client_secret)).access!
        const linked = await v1("POST", "/v1/sandbox/public_token/create", access, {
          provider: "provider_a",
          state: "CO",
          external_id: `store-${viewport.name}`
        })
        const exchanged = await v1("POST", "/v1/link/token/exchange", access, {
          public_token: linked.body.data.public_token
        })
        expect(exchanged.status).toBe(200)
        const connectionId = exchanged.body.data.connection_id as string
        // a sandbox connection's managed sync starts with its first sync-status call
        expect((await v1("GET", `/v1/connections/${connectionId}/sync`, access)).status).toBe(200)

        // --- (c) create an endpoint: its secret shown once
        await nav(page, "Webhooks")
        await page.keyboard.press("Tab")
        expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Create endpoint")
        await check(page, "webhooks")
        await page.getByRole("button", { name: "Create endpoint" }).click()
        const form = page.getByRole("form", { name: "New webhook endpoint" })
        await form.getByLabel("URL").fill(hook.url)
        await form.getByLabel("Description (optional)").fill(`<img src=x onerror=alert(1)> ${viewport.name}`)
        await form.getByRole("button", { name: "Create endpoint" }).click()
        await form.getByRole("alert").filter({ hasText: "at least one event" }).waitFor()
        await form.getByLabel("lab_result.received").check()
        await check(page, "webhooks, a new endpoint")
        await form.getByRole("button", { name: "Create endpoint" }).click()
        const revealed = page.locator("#revealed-secret")
        await revealed.waitFor()
        const secret = (await revealed.innerText()).trim()
        expect(secret).toMatch(/^whsec_/)
        await check(page, "webhooks, the secret")
        await shoot(page, "webhooks-secret", viewport, [revealed])
        await page.getByRole("button", { name: "Copy secret" }).click()
        await page.getByText("Copied.").waitFor()
        await page.getByRole("button", { name: "I have copied it" }).click()
        expect(await page.content()).not.toContain(secret)
        const endpoint = page.getByRole("region", { name: "Endpoints" }).getByRole("row").filter({ hasText: hook.url })
        await endpoint.waitFor()
        // the description is text, not markup
        expect(await endpoint.innerText()).toContain(`<img src=x onerror=alert(1)> ${viewport.name}`)
        expect(await page.locator("img[src=x]").count()).toBe(0)

        // --- Edit events, by keyboard: a second event type added (Space), saved (Enter); /v1 agrees
        const webhookId = (await endpoint.locator("code").filter({ hasText: /^wh_/ }).innerText()).trim()
        await endpoint.getByRole("button", { name: "Edit events" }).focus()
        await page.keyboard.press("Enter")
        const editing = page.getByRole("form", { name: `Events of ${hook.url}` })
        await editing.getByLabel("transfer.completed").focus()
        await page.keyboard.press("Space")
        expect(await editing.getByLabel("transfer.completed").isChecked()).toBe(true)
        await check(page, "webhooks, editing events")
        await editing.getByRole("button", { name: "Save events" }).focus()
        await page.keyboard.press("Enter")
        await editing.waitFor({ state: "detached" })
        await endpoint.filter({ hasText: "transfer.completed" }).waitFor()
        expect([...(await v1("GET", `/v1/webhooks/${webhookId}`, access)).body.data.events].sort()).toEqual([
          "lab_result.received",
          "transfer.completed"
        ])

        // --- a test event: received, signed with the secret
        await endpoint.getByRole("button", { name: "Send test event" }).click()
        await page.getByRole("status").filter({ hasText: /Test event evt_test_\w+ delivered/ }).waitFor()
        expect(hook.state.received).toHaveLength(1)
        const tested = hook.state.received[0]!
        expect(tested.headers["x-tracebridge-event-type"]).toBe("webhook.test")
        expect(JSON.parse(tested.body).type).toBe("webhook.test")
        expect(signedWith(tested, secret)).toBe(true)

        // --- rotate the secret: the new one shown once; both sign for the overlap
        await endpoint.getByRole("button", { name: "Rotate secret" }).click()
        await endpoint.getByRole("button", { name: "Yes, rotate" }).click()
        await page.getByRole("region", { name: "New secret" }).getByText("Old secret signs until").waitFor()
        const rotated = (await revealed.innerText()).trim()
        expect(rotated).toMatch(/^whsec_/)
        expect(rotated).not.toBe(secret)
        await page.getByRole("button", { name: "I have copied it" }).click()
        await endpoint.getByRole("button", { name: "Send test event" }).click()
        await eventually("the second test event", async () => hook.state.received.length === 2)
        expect(signedWith(hook.state.received[1]!, rotated)).toBe(true)
        expect(signedWith(hook.state.received[1]!, secret)).toBe(true)
        expect(await page.content()).not.toMatch(/whsec_/)

        // --- (a) a failing receiver: the delivery fails, and its attempt shows the answer as text
        hook.state.status = 500
        hook.state.body = JSON.stringify({ error: "receiver down", note: "<script>alert(1)</script>" })
        const simulated = await v1("POST", `/v1/sandbox/${connectionId}/simulate`, access, {
          scenario: "lab_result_received",
          params: {}
        })
        expect(simulated.status).toBe(200)
        const eventId = simulated.body.data.event.id as string
        await eventually("the failed attempt", async () => hook.state.received.length === 3)
        const deliveries = page.getByRole("region", { name: "Deliveries" })
        const delivery = deliveries.getByRole("row").filter({ hasText: eventId })
        await eventually("the delivery listed as retrying", async () => {
          await page.getByRole("button", { name: "Refresh" }).click()
          return (await delivery.filter({ hasText: "retrying" }).count()) === 1
        })
        await delivery.getByRole("button", { name: "Attempts" }).click()
        const attempts = page.getByRole("list", { name: /^Attempts of / })
        await attempts.getByText("Attempt 1").waitFor()
        expect(await attempts.innerText()).toContain("500")
        expect(await attempts.locator("pre.body").innerText()).toContain("<script>alert(1)</script>")
        expect(await page.locator("main script").count()).toBe(0)
        await check(page, "webhooks, a failed delivery")
        if (viewport.width < 600) {
          // on a phone, the deliveries are what the picture is for
          await page.getByRole("heading", { name: "Deliveries", exact: true }).evaluate((h) =>
            h.scrollIntoView({ block: "start" })
          )
          await page.locator("div.table-box[aria-label='Deliveries']").evaluate((box) => box.scrollTo({ left: 0 }))
        }
        await shoot(page, "webhooks", viewport)

        // the receiver is fixed; Resend: it gets the same event
        hook.state.status = 200
        hook.state.body = "{\"received\":true}"
        await delivery.getByRole("button", { name: "Resend" }).click()
        await page.getByRole("status").filter({ hasText: "is due again now" }).waitFor()
        await eventually(
          "the event received after Resend",
          async () =>
            hook.state.received.some((r) =>
              r.headers["x-tracebridge-event-id"] === eventId && r !== hook.state.received[2]
            )
        )
        await eventually("the delivery listed as succeeded", async () => {
          await page.getByRole("button", { name: "Refresh" }).click()
          return (await delivery.filter({ hasText: "succeeded" }).count()) === 1
        })

        // --- (c) disable: no test event; a resend now fails for good
        await endpoint.getByRole("button", { name: "Disable" }).click()
        await endpoint.getByRole("button", { name: "Yes, disable" }).click()
        await page.getByRole("status").filter({ hasText: "is disabled" }).waitFor()
        await endpoint.getByText("disabled", { exact: true }).waitFor()
        expect(await endpoint.getByRole("button", { name: "Send test event" }).isDisabled()).toBe(true)
        expect((await v1("GET", `/v1/webhooks/${webhookId}`, access)).body.data.status).toBe("disabled")
        await delivery.getByRole("button", { name: "Resend" }).click()
        await eventually("the delivery failed for good", async () => {
          await page.getByRole("button", { name: "Refresh" }).click()
          return (await delivery.filter({ hasText: "failed" }).count()) === 1
        })
        // enabled again, "Resend failed" over the last day sends it once more
        const received = hook.state.received.length
        await endpoint.getByRole("button", { name: "Enable" }).click()
        await page.getByRole("status").filter({ hasText: "is enabled" }).waitFor()
        // the form's range still ends at the press when the page was opened long before: the page
        // is opened again with its clock ten minutes behind, then the clock is put right
        await page.clock.setSystemTime(Date.now() - 600_000)
        await page.reload()
        await heading(page, "Webhooks")
        await page.clock.setSystemTime(Date.now())
        const resendForm = page.getByRole("form", { name: "Resend failed deliveries" })
        await resendForm.getByLabel("Endpoint").selectOption({ label: hook.url })
        await check(page, "webhooks, resend failed")
        await resendForm.getByRole("button", { name: "Resend failed" }).click()
        await page.getByRole("status").filter({ hasText: "1 failed delivery is queued again." }).waitFor()
        await eventually("the failed delivery received again", async () => hook.state.received.length === received + 1)
        expect(hook.state.received.at(-1)!.headers["x-tracebridge-event-id"]).toBe(eventId)
        expect(signedWith(hook.state.received.at(-1)!, rotated)).toBe(true)
        // and disabled at the end
        await endpoint.getByRole("button", { name: "Disable" }).click()
        await endpoint.getByRole("button", { name: "Yes, disable" }).click()
        await endpoint.getByText("disabled", { exact: true }).waitFor()

        // --- (b) an expired login: under Issues, and on the connection's page
        expect(
          (await v1("PUT", `/v1/sandbox/${connectionId}/faults`, access, { kind: "expired_login" })).status
        )
          .toBe(200)
        const refused = await v1("GET", `/v1/connections/${connectionId}/facilities`, access)
        expect(refused.status).toBe(409)
        await nav(page, "Overview")
        const issue = page.getByRole("region", { name: "Issues" }).getByRole("row").filter({ hasText: connectionId })
        await issue.waitFor()
        expect(await issue.innerText()).toMatch(/critical[\s\S]*relink/)
        await nav(page, "Connections")
        await page.getByRole("link", { name: `Connection ${connectionId}` }).click()
        await heading(page, `Connection ${connectionId}`)
        expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("H1")
        await page.getByText("Needs a relink: the state system refused its login").waitFor()
        // its last error: the refused read (the request log is written in batches: read again until it is there)
        await eventually("the refused read as the last error", async () => {
          if ((await page.locator("dd").filter({ hasText: /answered 409 connection_login_required/ }).count()) === 1) {
            return true
          }
          await page.reload()
          await heading(page, `Connection ${connectionId}`)
          return false
        }, 40)
        // its facilities, each with its sync and every list's (backfill, last sync, count)
        await eventually("the facilities' lists", async () => {
          if ((await page.getByRole("region", { name: /^Lists of facility / }).count()) > 0) return true
          await page.reload()
          await heading(page, `Connection ${connectionId}`)
          return false
        }, 40)
        const lists = page.getByRole("region", { name: /^Lists of facility / }).first()
        expect(await lists.getByRole("row").count()).toBeGreaterThan(1)
        expect(await lists.innerText()).toMatch(/packages/)
        expect(await page.getByRole("heading", { level: 3, name: /^Facility / }).count()).toBeGreaterThan(0)
        await check(page, "a connection's page, needing a relink")
        await shoot(page, "connection", viewport)

        // Relink: the real Connect widget in update mode. A login the state system refuses changes
        // nothing (the fault stays); the good login entered again replaces the expired one, which
        // lifts the fault: the connection is active again and its issue closes.
        await page.getByRole("button", { name: "Relink" }).click()
        const frame = page.frameLocator("iframe[title='Tracebridge Connect']")
        await frame.getByRole("heading", { name: /Re-enter your Metrc login/ }).waitFor({ timeout: 15_000 })
        await shoot(page, "connection-relink", viewport)
        await frame.getByLabel("User API key").fill("user_bad")
        await frame.getByRole("button", { name: "Link account" }).click()
        await frame.getByRole("alert").filter({ hasText: "did not accept this login" }).waitFor({ timeout: 90_000 })
        expect((await v1("GET", `/v1/sandbox/${connectionId}/faults`, access)).body.data.fault).toEqual({
          kind: "expired_login"
        })
        await frame.getByLabel("User API key").fill("user_good")
        await frame.getByRole("button", { name: "Try again" }).click()
        await frame.getByRole("heading", { name: "Your account is linked." }).waitFor({ timeout: 90_000 })
        await frame.getByRole("button", { name: "Continue" }).click()
        await page.getByRole("status").filter({ hasText: "relinked" }).waitFor()
        await page.locator("dd").filter({ hasText: /^active$/ }).waitFor()
        expect(await page.getByText("Needs a relink").count()).toBe(0)
        expect((await v1("GET", `/v1/sandbox/${connectionId}/faults`, access)).body.data.fault).toBeNull()
        expect((await v1("GET", `/v1/connections/${connectionId}/facilities`, access)).status).toBe(200)
        await check(page, "a connection's page, relinked")
        await nav(page, "Overview")
        await page.getByRole("heading", { level: 2, name: /^Issues/ }).waitFor()
        expect(
          await page.getByRole("region", { name: "Issues" }).getByRole("row").filter({ hasText: connectionId }).count()
        ).toBe(0)

        // --- a webhook URL holding markup is shown as text (made on the page, then disabled)
        const markupUrl = `${hook.url.replace(/\/hooks$/, "/markup")}?x=<script>alert(1)</script>&y=javascript:alert(1)`
        await nav(page, "Webhooks")
        await page.getByRole("button", { name: "Create endpoint" }).click()
        const markupForm = page.getByRole("form", { name: "New webhook endpoint" })
        await markupForm.getByLabel("URL").fill(markupUrl)
        await markupForm.getByLabel("transfer.completed").check()
        await markupForm.getByRole("button", { name: "Create endpoint" }).click()
        await page.locator("#revealed-secret").waitFor()
        await page.getByRole("button", { name: "I have copied it" }).click()
        const stored = (await v1("GET", "/v1/webhooks", access)).body.data.find((w: { url: string }) =>
          w.url.startsWith(`${hook.url.replace(/\/hooks$/, "/markup")}?`)
        ) as { id: string; url: string }
        expect(stored.url).toContain("alert(1)")
        const markupRow = page.getByRole("region", { name: "Endpoints" }).getByRole("row").filter({
          hasText: stored.id
        })
        await markupRow.waitFor()
        expect((await markupRow.locator("td.url").innerText()).replace(/\s/g, "")).toContain(
          stored.url.replace(/\s/g, "")
        )
        expect(await page.locator("main script").count()).toBe(0)
        expect(await page.locator("a[href^=\"javascript:\"]").count()).toBe(0)
        await check(page, "webhooks, a URL holding markup")
        await markupRow.getByRole("button", { name: "Disable" }).click()
        await markupRow.getByRole("button", { name: "Yes, disable" }).click()
        await markupRow.getByText("disabled", { exact: true }).waitFor()

        // --- a viewer: both pages, no button that changes anything, never a secret
        const invitation = await dashboardCall(page, "POST", "/dashboard/api/invitations", {
          email: `viewer-hooks-${viewport.name}@example.test`,
          role: "viewer"
        })
        expect(invitation.status).toBe(200)
        const viewer = await open(viewport, /^40\d$/)
        try {
          await viewer.page.goto(invitation.body.link)
          await heading(viewer.page, "Accept an invitation")
          await viewer.page.getByLabel("E-mail").fill(`viewer-hooks-${viewport.name}@example.test`)
          await viewer.page.getByLabel(/^Password/).fill(PASSWORD)
          await viewer.page.getByRole("button", { name: "Accept and sign in" }).click()
          await heading(viewer.page, "API keys")
          await nav(viewer.page, "Webhooks")
          await viewer.page.getByRole("region", { name: "Endpoints" }).getByRole("row").filter({ hasText: hook.url })
            .waitFor()
          const rows = viewer.page.getByRole("region", { name: "Deliveries" }).getByRole("row").filter({
            hasText: eventId
          })
          await rows.getByRole("button", { name: "Attempts" }).click()
          await viewer.page.getByRole("list", { name: /^Attempts of / }).getByText("Attempt 1").waitFor()
          // an endpoint's own deliveries: its row's Deliveries button filters the list to it
          await viewer.page.getByRole("region", { name: "Endpoints" }).getByRole("row").filter({ hasText: hook.url })
            .getByRole("button", { name: "Deliveries" }).click()
          const endpointFilter = viewer.page.getByRole("form", { name: "Filter deliveries" }).getByLabel("Endpoint")
          await eventually(
            "the list filtered to the endpoint",
            async () =>
              (await endpointFilter.evaluate((select) =>
                (select as HTMLSelectElement).selectedOptions[0]?.textContent ?? ""
              )) === hook.url
          )
          await eventually("only that endpoint's deliveries", async () => {
            const endpoints = await viewer.page.locator("div.table-box[aria-label='Deliveries'] td.url").allInnerTexts()
            return endpoints.length > 0 && endpoints.every((u) => u.replace(/\s/g, "") === hook.url)
          })
          for (
            const name of [
              "Create endpoint",
              "Send test event",
              "Rotate secret",
              "Disable",
              "Enable",
              "Edit events",
              "Resend",
              "Resend failed"
            ]
          ) {
            expect(await viewer.page.getByRole("button", { name, exact: true }).count(), name).toBe(0)
          }
          expect(await viewer.page.content()).not.toMatch(/whsec_/)
          await check(viewer.page, "webhooks as a viewer")
          await shoot(viewer.page, "webhooks-viewer", viewport)
          await viewer.page.goto(`${origin}/dashboard/connections/${connectionId}`)
          await heading(viewer.page, `Connection ${connectionId}`)
          await viewer.page.getByRole("heading", { name: "Facilities" }).waitFor()
          expect(await viewer.page.getByRole("button", { name: /Relink|Delete/ }).count()).toBe(0)
          await check(viewer.page, "a connection's page as a viewer")
          expect(viewer.problems).toEqual([])
        } finally {
          await viewer.context.close()
        }
        expect(problems).toEqual([])
      } catch (error) {
        await failureShot(page, `webhooks-${viewport.name}`)
        throw new Error(
          `${String(error)}\n--- the page said:\n${await page.locator("main").innerText().catch(() => "?")}`
        )
      } finally {
        await context.close()
        await hook.close()
      }
    }, 300_000)
  }
})
