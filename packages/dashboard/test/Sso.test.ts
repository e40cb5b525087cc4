/**
 * Single sign-on in real Chromium (playwright-core, Debian's /usr/bin/chromium) against the built
 * server, started by `support/Browser.ts` (so on SQLite, or on Postgres under `npm run test:pg`)
 * with a real OpenID provider (`oidc-provider` on a loopback port, its development login form;
 * `packages/http/test/support/OidcProvider.ts`, shared with the API's SSO tests), at 1280 × 800 and
 * 375 × 740:
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
 * Screenshots: `sso-sign-in-*.png`, `sso-switch-*.png`, `sso-refused-*.png`, `sso-domains-*.png`
 * (TRACEBRIDGE_SCREENSHOTS=docs puts them in docs).
 */
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as OidcProvider from "../../http/test/support/OidcProvider.js"
import {
  admin,
  check,
  heading,
  open,
  origin,
  output,
  ownerLink,
  PASSWORD,
  shoot,
  startServer,
  viewports
} from "./support/Browser.js"

let provider: OidcProvider.TestProvider | undefined
startServer(async (server) => {
  // the provider, with the dashboard's client and its callback page at the server's origin
  provider = await OidcProvider.start([`${server}/dashboard/sso/callback`])
  return {
    TRACEBRIDGE_OIDC_ISSUER: provider.issuer,
    TRACEBRIDGE_OIDC_CLIENT_ID: OidcProvider.CLIENT_ID,
    TRACEBRIDGE_OIDC_CLIENT_SECRET: OidcProvider.CLIENT_SECRET
  }
})
afterAll(() => provider?.close())

/** What a refused call of our pages may answer: the API answering, not the page failing. */
const answered = /^40[1349]$/

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

// the first owner, by password; the organisation claims acme.test
beforeAll(async () => {
  const accepted = await fetch(`${origin}/dashboard/api/invitations/accept`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      token: new URL(ownerLink).searchParams.get("token"),
      email: "owner@example.com",
      password: PASSWORD
    })
  })
  const me = await accepted.json() as any
  owner = {
    cookie: /tb_session=([^;]+)/.exec(accepted.headers.get("set-cookie") ?? "")![1]!,
    csrf: me.csrf_token,
    organisationId: me.organisation.id
  }
  expect((await api("POST", "/sso/domains", { domain: "acme.test", role: "developer" })).status).toBe(201)
})

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
      // a second organisation invites this e-mail (the operator's CLI, on the server's database)
      const partner = admin("create-org", `Partner ${viewport.name}`).trim().split("\t")[0]!
      admin("invite", partner, email, "--role", "viewer")

      const { context, page, problems } = await open(viewport, answered)
      await page.goto(`${origin}/dashboard`)
      await heading(page, "Sign in")
      await page.getByRole("link", { name: "Sign in with SSO" }).waitFor()
      expect(await page.getByRole("link", { name: "Sign in with SSO" }).getAttribute("href")).toBe(
        "/dashboard/api/sso/start"
      )
      await check(page, `sign-in with SSO at ${viewport.name}`)
      await shoot(page, "sso-sign-in", viewport)

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
      await shoot(page, "sso-switch", viewport)
      const session = await page.evaluate(async () => (await fetch("/dashboard/api/session")).json())
      expect(session.organisation.id).toBe(owner.organisationId)
      await context.close()

      // an e-mail of no claimed domain: refused on the callback page, in the API's words
      const stranger = await open(viewport, answered)
      await ssoAs(stranger.page, `someone-${viewport.name}@elsewhere.test`)
      await heading(stranger.page, "Signing in with SSO")
      await stranger.page.getByRole("alert").waitFor()
      expect(await stranger.page.getByRole("alert").textContent()).toContain(
        "No organisation for this e-mail domain (elsewhere.test)"
      )
      expect(stranger.page.url()).toBe(`${origin}/dashboard/sso/callback`)
      await check(stranger.page, `refused at ${viewport.name}`)
      await shoot(stranger.page, "sso-refused", viewport)
      await stranger.page.getByRole("link", { name: "Back to sign-in" }).click()
      await heading(stranger.page, "Sign in")
      await stranger.context.close()
      expect([...problems, ...stranger.problems]).toEqual([])
    })
  }

  for (const viewport of viewports) {
    it(`at ${viewport.name} px: the Team page's single sign-on domains: an owner adds and removes one`, async () => {
      const { context, page, problems } = await open(viewport, answered)
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
      await check(page, `team with SSO domains at ${viewport.name}`)
      await section.scrollIntoViewIfNeeded()
      await shoot(page, "sso-domains", viewport)
      // refused in the API's words
      await page.getByLabel("Domain", { exact: true }).fill("example.org")
      await page.getByRole("button", { name: "Add domain" }).click()
      await section.getByRole("alert").waitFor()
      expect(await section.getByRole("alert").textContent()).toContain(
        "already one of this organisation's single sign-on domains"
      )
      await check(page, `team with a refused SSO domain at ${viewport.name}`)
      await page.getByRole("button", { name: "Remove example.org" }).click()
      await page.getByRole("button", { name: "Yes, remove" }).click()
      await section.getByText("example.org was removed").waitFor()
      await section.getByRole("cell", { name: "example.org", exact: true }).waitFor({ state: "detached" })
      expect((await api("GET", "/sso/domains")).body.data.map((d: any) => d.domain)).toEqual(["acme.test"])
      await context.close()
      expect(problems).toEqual([])
    })
  }

  it("the client secret never reached a log line", () => {
    expect(output).toContain("Tracebridge API on")
    expect(output).not.toContain(OidcProvider.CLIENT_SECRET)
  })
})
