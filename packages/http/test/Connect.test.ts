/**
 * The Connect widget in real Chromium (playwright-core driving Debian's /usr/bin/chromium): an
 * integrator page on its own origin loads the SDK from the API, opens the widget, and the end user
 * clicks (or types) through it. Screenshots go to packages/http/build/screenshots (not committed).
 */
import { HttpServer } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Browser, Page } from "playwright-core"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import { LinkTokens } from "../src/persistence/LinkTokens.js"
import * as Crypto from "../src/services/Crypto.js"
import { launch, serveIntegrator } from "./support/Browser.js"
import { call, signIn, TestApp } from "./support/TestApp.js"

const shots = fileURLToPath(new URL("../build/screenshots/", import.meta.url))
mkdirSync(shots, { recursive: true })

/** The API's origin, a signed-in organisation, a browser and an integrator page. */
const setup = Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  const address = server.address as { readonly port: number }
  const api = `http://127.0.0.1:${address.port}`
  const me = yield* signIn
  const integrator = yield* serveIntegrator(api)
  const browser: Browser = yield* launch
  const page: Page = yield* Effect.promise(() => browser.newPage({ viewport: { width: 390, height: 800 } }))
  return { api, me, integrator, page }
})

const linkToken = (access: string, body: Record<string, unknown> = {}) =>
  Effect.map(
    call("POST", "/v1/link/token/create", { token: access, json: body }),
    (r) => r.body.data.link_token as string
  )

const text = (page: Page, selector: string) => Effect.promise(() => page.locator(selector).innerText())
const act = <A>(f: () => Promise<A>) => Effect.promise(f)

const fillLogin = (page: Page, userKey: string) =>
  act(async () => {
    const frame = page.frameLocator("iframe[title='Tracebridge Connect']")
    await frame.getByRole("button", { name: "Metrc" }).click()
    await frame.getByLabel("State").selectOption("CO")
    await frame.getByRole("button", { name: "Continue" }).click()
    await frame.getByLabel("User API key").fill(userKey)
    await frame.getByRole("button", { name: /Link account|Try again/ }).click()
  })

/** The success pane, then Continue: only then does the integrator get the public token. */
const continueFromSuccess = (page: Page) =>
  act(async () => {
    const frame = page.frameLocator("iframe[title='Tracebridge Connect']")
    await frame.getByRole("heading", { name: "Your account is linked." }).waitFor({ timeout: 20_000 })
    await frame.getByRole("button", { name: "Continue" }).click()
  })

describe.sequential("Connect widget in Chromium", () => {
  it.live(
    "links a sandbox account by clicking, with one terminal callback and the events",
    () =>
      Effect.gen(function*() {
        const { integrator, me, page } = yield* setup
        const token = yield* linkToken(me.access, { state: "opaque-123" })
        yield* act(() => page.goto(`${integrator.origin}/?token=${encodeURIComponent(token)}`))
        yield* act(() => page.getByRole("button", { name: "Link account" }).click())
        yield* fillLogin(page, "user_good")
        yield* act(() =>
          page.frameLocator("iframe[title='Tracebridge Connect']").locator("#success").waitFor({ timeout: 20_000 })
        )
        // the success pane comes first: the integrator has nothing yet
        assert.strictEqual(yield* text(page, "#result"), "")
        yield* continueFromSuccess(page)
        yield* act(() => page.locator("#result").filter({ hasText: "public-sandbox-" }).waitFor({ timeout: 20_000 }))
        yield* act(() => page.screenshot({ path: join(shots, "linked.png") }))
        const [publicToken, terminals] = (yield* text(page, "#result")).split("|")
        assert.strictEqual(terminals, "1")
        assert.strictEqual(yield* text(page, "#exit"), "")
        const events = (yield* text(page, "#events")).split("\n")
        assert.deepStrictEqual(events.map((e) => e.split(":")[0]), [
          "OPEN",
          "SELECT_PROVIDER",
          "SELECT_STATE",
          "SUBMIT_CREDENTIALS",
          "SUCCESS"
        ])
        assert.isTrue(events.slice(1).every((e) => e.endsWith(":session")))
        const exchanged = yield* call("POST", "/v1/link/token/exchange", {
          token: me.access,
          json: { public_token: publicToken }
        })
        assert.strictEqual(exchanged.body.data.status, "active")
        assert.strictEqual(exchanged.body.data.client_state, "opaque-123")
        const reused = yield* act(() => page.goto(`${integrator.origin}/?token=${encodeURIComponent(token)}`))
        void reused
        yield* act(() => page.getByRole("button", { name: "Link account" }).click())
        const frame = page.frameLocator("iframe[title='Tracebridge Connect']")
        yield* act(() => frame.locator("[data-code='link_token_used']").waitFor({ timeout: 10_000 }))
        yield* act(() => frame.getByRole("button", { name: "Close" }).last().click())
        yield* act(() => page.locator("#exit").filter({ hasText: "|" }).waitFor({ timeout: 10_000 }))
        assert.strictEqual(yield* text(page, "#exit"), "validation_error/link_token_used|1")
      }).pipe(Effect.scoped, Effect.provide(TestApp)),
    60_000
  )

  it.live(
    "shows a refused login and lets the user retry; a locked account has its own message",
    () =>
      Effect.gen(function*() {
        const { integrator, me, page } = yield* setup
        const token = yield* linkToken(me.access)
        yield* act(() => page.goto(`${integrator.origin}/?token=${encodeURIComponent(token)}`))
        yield* act(() => page.getByRole("button", { name: "Link account" }).click())
        yield* fillLogin(page, "user_bad")
        const frame = page.frameLocator("iframe[title='Tracebridge Connect']")
        yield* act(() => frame.locator("[data-code='invalid_credentials']").waitFor({ timeout: 10_000 }))
        yield* act(() => page.screenshot({ path: join(shots, "bad-login.png") }))
        yield* act(() => frame.getByLabel("User API key").fill("user_locked"))
        yield* act(() => frame.getByRole("button", { name: "Try again" }).click())
        yield* act(() => frame.locator("[data-code='account_locked']").waitFor({ timeout: 10_000 }))
        yield* act(() => frame.getByLabel("User API key").fill("user_good"))
        yield* act(() => frame.getByRole("button", { name: "Try again" }).click())
        yield* continueFromSuccess(page)
        yield* act(() => page.locator("#result").filter({ hasText: "public-sandbox-" }).waitFor({ timeout: 20_000 }))
        assert.include(yield* text(page, "#events"), "ERROR")
      }).pipe(Effect.scoped, Effect.provide(TestApp)),
    60_000
  )

  it.live(
    "reports an expired link token with its own code, and closing calls onExit with it, once",
    () =>
      Effect.gen(function*() {
        const { integrator, me, page } = yield* setup
        const live = yield* linkToken(me.access)
        const linkTokens = yield* LinkTokens
        const stored = Option.getOrThrow(yield* linkTokens.getLinkToken(Crypto.hash(live)))
        // the same request's link token, expired (stored rows are never overwritten: a new one)
        const token = Crypto.token("link-sandbox-")
        yield* linkTokens.insertLinkToken({ ...stored, hash: Crypto.hash(token), expires_at: 0 })
        yield* act(() => page.goto(`${integrator.origin}/?token=${encodeURIComponent(token)}`))
        yield* act(() => page.getByRole("button", { name: "Link account" }).click())
        const frame = page.frameLocator("iframe[title='Tracebridge Connect']")
        yield* act(() => frame.locator("[data-code='link_token_expired']").waitFor({ timeout: 10_000 }))
        yield* act(() => page.screenshot({ path: join(shots, "expired.png") }))
        yield* act(() => frame.getByRole("button", { name: "Close" }).first().click())
        yield* act(() => page.locator("#exit").filter({ hasText: "|" }).waitFor({ timeout: 10_000 }))
        assert.strictEqual(yield* text(page, "#exit"), "validation_error/link_token_expired|1")
        const exitArgs = yield* act(() => page.evaluate(() => (window as any).exitArgs))
        assert.deepStrictEqual(Object.keys(exitArgs.error).sort(), ["code", "message", "type"])
        assert.match(exitArgs.error.message, /expired/)
        assert.strictEqual(exitArgs.metadata.status, "failed")
        assert.strictEqual(yield* text(page, "#result"), "")
      }).pipe(Effect.scoped, Effect.provide(TestApp)),
    60_000
  )

  it.live(
    "redirect mode: the page returns to redirect_uri and the SDK completes from it",
    () =>
      Effect.gen(function*() {
        const { api, integrator, me, page } = yield* setup
        const token = yield* linkToken(me.access, { redirect_uri: `${integrator.origin}/callback`, state: "xyz" })
        yield* act(() => page.goto(`${api}/connect?link_token=${encodeURIComponent(token)}`))
        yield* act(async () => {
          await page.getByRole("button", { name: "Metrc" }).click()
          await page.getByLabel("State").selectOption("CO")
          await page.getByRole("button", { name: "Continue" }).click()
          await page.getByLabel("User API key").fill("user_good")
          await page.getByRole("button", { name: "Link account" }).click()
          await page.getByRole("heading", { name: "Your account is linked." }).waitFor({ timeout: 20_000 })
          await page.getByRole("button", { name: "Continue" }).click()
        })
        yield* act(() => page.waitForURL(/\/callback\?/, { timeout: 20_000 }))
        const url = new URL(page.url())
        assert.strictEqual(url.searchParams.get("state"), "xyz")
        yield* act(() => page.locator("#result").filter({ hasText: "public-sandbox-" }).waitFor({ timeout: 10_000 }))
        assert.strictEqual((yield* text(page, "#result")).split("|")[0], url.searchParams.get("public_token"))
        yield* act(() => page.reload())
        yield* act(() => page.locator("#result").filter({ hasText: "public-sandbox-" }).waitFor({ timeout: 10_000 }))
      }).pipe(Effect.scoped, Effect.provide(TestApp)),
    60_000
  )

  it.live(
    "redirect mode: closing the page returns to redirect_uri with status=user_exited, and the SDK calls onExit(null)",
    () =>
      Effect.gen(function*() {
        const { api, integrator, me, page } = yield* setup
        const token = yield* linkToken(me.access, { redirect_uri: `${integrator.origin}/callback`, state: "xyz" })
        yield* act(() => page.goto(`${api}/connect?link_token=${encodeURIComponent(token)}`))
        yield* act(async () => {
          await page.getByRole("button", { name: "Metrc" }).click()
          await page.locator("#close").click()
        })
        yield* act(() => page.waitForURL(/\/callback\?/, { timeout: 20_000 }))
        const url = new URL(page.url())
        assert.strictEqual(url.searchParams.get("status"), "user_exited")
        assert.strictEqual(url.searchParams.get("state"), "xyz")
        assert.isNull(url.searchParams.get("public_token"))
        yield* act(() => page.locator("#exit").filter({ hasText: "|" }).waitFor({ timeout: 10_000 }))
        assert.strictEqual(yield* text(page, "#exit"), "none|1")
        assert.strictEqual(yield* text(page, "#result"), "")
      }).pipe(Effect.scoped, Effect.provide(TestApp)),
    60_000
  )

  it.live(
    "update mode re-authenticates the same connection and brings it back to active",
    () =>
      Effect.gen(function*() {
        const { integrator, me, page } = yield* setup
        const created = yield* call("POST", "/v1/sandbox/public_token/create", {
          token: me.access,
          json: { provider: "provider_a", state: "CO" }
        })
        const exchanged = yield* call("POST", "/v1/link/token/exchange", {
          token: me.access,
          json: { public_token: created.body.data.public_token }
        })
        const id = exchanged.body.data.connection_id as string
        const connectionStore = yield* ConnectionStore
        yield* connectionStore.updateConnection(id, { status: "error" }) // as after connection_login_required
        assert.strictEqual(
          (yield* call("GET", `/v1/connections/${id}`, { token: me.access })).body.data.status,
          "error"
        )
        const token = yield* linkToken(me.access, { connection_id: id })
        yield* act(() => page.goto(`${integrator.origin}/?token=${encodeURIComponent(token)}`))
        yield* act(() => page.getByRole("button", { name: "Link account" }).click())
        const frame = page.frameLocator("iframe[title='Tracebridge Connect']")
        yield* act(() => frame.getByRole("heading", { name: /Re-enter your Metrc login/ }).waitFor({ timeout: 10_000 }))
        assert.strictEqual(yield* act(() => frame.locator("#step-text").innerText()), "Step 1 of 1")
        assert.strictEqual(yield* act(() => frame.locator("#back").count()), 0)
        yield* act(() => frame.getByLabel("User API key").fill("user_good"))
        yield* act(() => frame.getByRole("button", { name: "Link account" }).click())
        yield* continueFromSuccess(page)
        yield* act(() => page.locator("#result").filter({ hasText: "public-sandbox-" }).waitFor({ timeout: 20_000 }))
        const publicToken = (yield* text(page, "#result")).split("|")[0]
        const again = yield* call("POST", "/v1/link/token/exchange", {
          token: me.access,
          json: { public_token: publicToken }
        })
        assert.strictEqual(again.body.data.connection_id, id)
        assert.strictEqual(again.body.data.status, "active")
        assert.isUndefined(again.body.data.connection_token)
      }).pipe(Effect.scoped, Effect.provide(TestApp)),
    60_000
  )

  it.live("completes with the keyboard only", () =>
    Effect.gen(function*() {
      const { api, me, page } = yield* setup
      const token = yield* linkToken(me.access)
      yield* act(() => page.goto(`${api}/connect?link_token=${encodeURIComponent(token)}`))
      yield* act(async () => {
        await page.getByRole("button", { name: "Metrc" }).waitFor()
        await page.keyboard.press("Tab") // first provider button
        await page.keyboard.press("Enter")
        await page.getByLabel("State").waitFor()
        await page.keyboard.press("Tab")
        await page.keyboard.type("CO")
        await page.keyboard.press("Tab") // the Continue button
        await page.keyboard.press("Enter")
        await page.getByLabel("User API key").waitFor()
        await page.keyboard.press("Tab")
        await page.keyboard.type("user_good")
        await page.keyboard.press("Enter")
        await page.getByRole("heading", { name: "Your account is linked." }).waitFor({ timeout: 20_000 })
      })
      yield* act(() => page.screenshot({ path: join(shots, "keyboard.png") }))
      assert.include(yield* text(page, "h1"), "linked")
    }).pipe(Effect.scoped, Effect.provide(TestApp)), 60_000)

  it.live(
    "a state system that fails, or a Tracebridge out of reach, then a close: onExit gets that error",
    () =>
      Effect.gen(function*() {
        const { integrator, me, page } = yield* setup
        const cases = [
          {
            // the API's own answer when the state system is down (as Errors.fromProviderError words it)
            route: (route: any) =>
              route.fulfill({
                status: 503,
                contentType: "application/json",
                headers: { "x-request-id": "req_test_503" },
                body: JSON.stringify({
                  error: {
                    type: "provider_error",
                    code: "provider_unavailable",
                    message: "The state system is not answering. Try again in a few minutes.",
                    request_id: "req_test_503"
                  }
                })
              }),
            expected: "provider_error/provider_unavailable|1"
          },
          { route: (route: any) => route.abort("connectionrefused"), expected: "api_error/internal_error|1" }
        ]
        for (const { expected, route } of cases) {
          const token = yield* linkToken(me.access)
          yield* act(() => page.unrouteAll())
          yield* act(() => page.route("**/connect/submit", route))
          yield* act(() => page.goto(`${integrator.origin}/?token=${encodeURIComponent(token)}`))
          yield* act(() => page.getByRole("button", { name: "Link account" }).click())
          yield* fillLogin(page, "user_good")
          const frame = page.frameLocator("iframe[title='Tracebridge Connect']")
          yield* act(() => frame.locator("#error").waitFor({ timeout: 10_000 }))
          yield* act(() => frame.locator("#close").click())
          yield* act(() => page.locator("#exit").filter({ hasText: "|" }).waitFor({ timeout: 10_000 }))
          assert.strictEqual(yield* text(page, "#exit"), expected)
          const { error, metadata } = yield* act(() => page.evaluate(() => (window as any).exitArgs))
          assert.deepStrictEqual(Object.keys(error).sort(), ["code", "message", "type"])
          assert.isAbove(error.message.length, 0)
          assert.strictEqual(metadata.status, "failed")
        }
      }).pipe(Effect.scoped, Effect.provide(TestApp)),
    60_000
  )

  it.live("Escape leaves the embedded widget through onExit, once", () =>
    Effect.gen(function*() {
      const { integrator, me, page } = yield* setup
      const token = yield* linkToken(me.access)
      yield* act(() => page.goto(`${integrator.origin}/?token=${encodeURIComponent(token)}`))
      yield* act(() => page.getByRole("button", { name: "Link account" }).click())
      yield* act(async () => {
        const frame = page.frameLocator("iframe[title='Tracebridge Connect']")
        await frame.getByRole("button", { name: "Metrc" }).waitFor()
        await frame.getByRole("button", { name: "Metrc" }).focus()
        await page.keyboard.press("Escape")
        await page.locator("#exit").filter({ hasText: "|" }).waitFor({ timeout: 10_000 })
      })
      assert.strictEqual(yield* text(page, "#exit"), "none|1")
      assert.strictEqual(yield* text(page, "#result"), "")
      assert.strictEqual(yield* act(() => page.locator("iframe").count()), 0)
      assert.deepStrictEqual((yield* text(page, "#events")).split("\n").map((e) => e.split(":")[0]), ["OPEN", "EXIT"])
    }).pipe(Effect.scoped, Effect.provide(TestApp)), 60_000)
})
