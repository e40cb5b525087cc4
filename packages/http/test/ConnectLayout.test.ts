/**
 * The Connect widget's panes in real Chromium at a phone's width (375 × 740) and a laptop's
 * (1280 × 800), as DECISIONS "Connect widget branding" asks: on every pane the integrator's name
 * and logo and a close control, on every numbered step "Step n of N" and (after the first) Back,
 * no horizontal overflow anywhere, a success pane before the public token is handed over, and
 * `onExit(error, metadata)` with `{type, code, message}` on a failure and `null` on a plain close.
 *
 * Screenshots go to packages/http/build/screenshots; with TRACEBRIDGE_SCREENSHOTS=docs they also
 * replace the ones in docs/connect/ (see docs/connect.md):
 *
 *   TRACEBRIDGE_SCREENSHOTS=docs npx vitest run packages/http/test/ConnectLayout.test.ts
 */
import { HttpServer } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { copyFileSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Browser, FrameLocator, Page } from "playwright-core"
import { launch, serveIntegrator } from "./support/Browser.js"
import { call, signIn, TestApp } from "./support/TestApp.js"

const shots = fileURLToPath(new URL("../build/screenshots/", import.meta.url))
const docs = fileURLToPath(new URL("../../../docs/connect/", import.meta.url))
mkdirSync(shots, { recursive: true })
const toDocs = process.env.TRACEBRIDGE_SCREENSHOTS === "docs"

const LOGO = "https://logo.tracebridge.test/green-leaf.svg"
const logoSvg =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 56 56"><rect width="56" height="56" rx="12" fill="#15803d"/><path d="M28 12c10 6 14 16 10 26-3 6-10 8-10 8s-7-2-10-8c-4-10 0-20 10-26z" fill="#bbf7d0"/><path d="M28 20v26" stroke="#14532d" stroke-width="3"/></svg>`

const viewports = [
  { name: "375", width: 375, height: 740 },
  { name: "1280", width: 1280, height: 800 }
] as const

const act = <A>(f: () => Promise<A>) => Effect.promise(f)

const setup = (viewport: { readonly width: number; readonly height: number }) =>
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const api = `http://127.0.0.1:${(server.address as { readonly port: number }).port}`
    const me = yield* signIn
    const integrator = yield* serveIntegrator(api)
    const browser: Browser = yield* launch
    const page: Page = yield* act(() => browser.newPage({ viewport }))
    // the logo's https host, answered here (the test machine has no network)
    yield* act(() =>
      page.route(LOGO, (route) => route.fulfill({ status: 200, contentType: "image/svg+xml", body: logoSvg }))
    )
    const linkToken = (body: Record<string, unknown> = {}) =>
      Effect.map(
        call("POST", "/v1/link/token/create", { token: me.access, json: body }),
        (r) => r.body.data.link_token as string
      )
    const open = (token: string) =>
      act(async () => {
        await page.goto(`${integrator.origin}/?token=${encodeURIComponent(token)}`)
        await page.getByRole("button", { name: "Link account" }).click()
        await page.frameLocator("iframe[title='Tracebridge Connect']").locator("#title").waitFor()
      })
    return { page, linkToken, open, frame: page.frameLocator("iframe[title='Tracebridge Connect']") }
  })

/** Nothing wider than the viewport: the integrator's page and the widget's own document. */
const assertNoOverflow = (page: Page, where: string) =>
  act(async () => {
    const outer = await page.evaluate(() => [document.scrollingElement!.scrollWidth, window.innerWidth])
    assert.isAtMost(outer[0]!, outer[1]!, `${where}: the page scrolls sideways`)
    const frame = page.frames().find((f) => f.url().includes("/connect?"))
    assert.isDefined(frame, where)
    const inner = await frame!.evaluate(() => {
      const widest = [...document.querySelectorAll("body *")]
        .map((el) => el.getBoundingClientRect().right)
        .reduce((a, b) => Math.max(a, b), 0)
      return [document.scrollingElement!.scrollWidth, window.innerWidth, widest]
    })
    assert.isAtMost(inner[0]!, inner[1]!, `${where}: the widget scrolls sideways`)
    assert.isAtMost(inner[2]!, inner[1]! + 0.5, `${where}: an element sticks out of the widget`)
  })

/** A control is on screen: visible, and inside the browser's viewport. */
const assertOnScreen = (page: Page, frame: FrameLocator, selector: string, where: string) =>
  act(async () => {
    const locator = frame.locator(selector)
    assert.isTrue(await locator.isVisible(), `${where}: ${selector} is not visible`)
    const box = await locator.boundingBox()
    const size = page.viewportSize()!
    assert.isNotNull(box, `${where}: ${selector}`)
    assert.isAtLeast(box!.x, 0, `${where}: ${selector} is off the left edge`)
    assert.isAtMost(box!.x + box!.width, size.width, `${where}: ${selector} is off the right edge`)
    assert.isAtMost(box!.y + box!.height, size.height, `${where}: ${selector} is below the fold`)
  })

/** What every pane has, and what a numbered step adds. */
const assertPane = (
  page: Page,
  frame: FrameLocator,
  where: string,
  expected: { readonly step?: string; readonly back: boolean; readonly client: string; readonly logo: boolean }
) =>
  Effect.gen(function*() {
    yield* assertNoOverflow(page, where)
    yield* assertOnScreen(page, frame, "#close", where)
    assert.strictEqual(yield* act(() => frame.locator("#close").getAttribute("aria-label")), "Close")
    yield* assertOnScreen(page, frame, "#client-name", where)
    assert.strictEqual(yield* act(() => frame.locator("#client-name").innerText()), expected.client, where)
    if (expected.logo) {
      yield* assertOnScreen(page, frame, "#logo", where)
      const loaded = yield* act(() =>
        frame.locator("#logo").evaluate((img: any) => img.complete && img.naturalWidth > 0)
      )
      assert.isTrue(loaded, `${where}: the logo did not load`)
    } else {
      assert.strictEqual(yield* act(() => frame.locator("#logo").count()), 0, where)
    }
    if (expected.step !== undefined) {
      yield* assertOnScreen(page, frame, "#step-text", where)
      assert.strictEqual(yield* act(() => frame.locator("#step-text").innerText()), expected.step, where)
    }
    if (expected.back) yield* assertOnScreen(page, frame, "#back", where)
    else assert.strictEqual(yield* act(() => frame.locator("#back").count()), 0, `${where}: Back on a first pane`)
  })

const shoot = (page: Page, name: string) =>
  act(async () => {
    const path = join(shots, `${name}.png`)
    // the integrator page's log of callbacks is for the assertions, not the picture
    const style = await page.addStyleTag({ content: "#events,#result,#exit{visibility:hidden}" })
    await page.screenshot({ path })
    await style.evaluate((el) => (el as unknown as { remove: () => void }).remove())
    if (toDocs) {
      mkdirSync(docs, { recursive: true })
      copyFileSync(path, join(docs, `${name}.png`))
    }
  })

describe.sequential("Connect widget layout in Chromium", () => {
  for (const viewport of viewports) {
    it.live(
      `${viewport.width}×${viewport.height}: every step, Back, close, the step indicator and the success pane`,
      () =>
        Effect.gen(function*() {
          const { frame, linkToken, open, page } = yield* setup(viewport)
          const client = "Green Leaf Dispensary"
          const shape = { client, logo: true }
          yield* open(yield* linkToken({ client_name: client, logo_url: LOGO }))

          yield* assertPane(page, frame, "provider", { ...shape, step: "Step 1 of 3", back: false })
          yield* shoot(page, `connect-${viewport.name}-1-provider`)
          yield* act(() => frame.getByRole("button", { name: "Metrc" }).click())
          yield* assertPane(page, frame, "state", { ...shape, step: "Step 2 of 3", back: true })
          // Back returns to the first step, and forward again
          yield* act(() => frame.locator("#back").click())
          yield* act(() => frame.getByRole("heading", { name: "Which state system do you use?" }).waitFor())
          yield* act(() => frame.getByRole("button", { name: "Metrc" }).click())
          yield* act(() => frame.getByLabel("State").selectOption("CO"))
          yield* shoot(page, `connect-${viewport.name}-2-state`)
          yield* act(() => frame.getByRole("button", { name: "Continue" }).click())
          yield* assertPane(page, frame, "login", { ...shape, step: "Step 3 of 3", back: true })
          yield* act(() => frame.locator("#back").click())
          assert.strictEqual(yield* act(() => frame.getByLabel("State").inputValue()), "CO", "Back keeps the state")
          yield* act(() => frame.getByRole("button", { name: "Continue" }).click())

          // a refused login: the error on the same step, still within the width
          yield* act(() => frame.getByLabel("User API key").fill("user_bad"))
          yield* act(() => frame.getByRole("button", { name: "Link account" }).click())
          yield* act(() => frame.locator("[data-code='invalid_credentials']").waitFor({ timeout: 10_000 }))
          yield* assertPane(page, frame, "refused login", { ...shape, step: "Step 3 of 3", back: true })
          yield* shoot(page, `connect-${viewport.name}-3-login-refused`)

          yield* act(() => frame.getByLabel("User API key").fill("user_good"))
          yield* act(() => frame.getByRole("button", { name: "Try again" }).click())
          yield* act(() => frame.locator("#success").waitFor({ timeout: 20_000 }))
          yield* assertPane(page, frame, "success", { ...shape, back: false })
          assert.strictEqual(yield* act(() => frame.locator("#step-text").innerText()), "Done")
          assert.include(yield* act(() => frame.locator("#success").innerText()), client)
          yield* assertOnScreen(page, frame, "#continue", "success")
          yield* shoot(page, `connect-${viewport.name}-4-success`)
          // the public token only after the success pane
          assert.strictEqual(yield* act(() => page.locator("#result").innerText()), "")
          yield* act(() => frame.getByRole("button", { name: "Continue" }).click())
          yield* act(() => page.locator("#result").filter({ hasText: "public-sandbox-" }).waitFor({ timeout: 10_000 }))
          assert.match(yield* act(() => page.locator("#result").innerText()), /^public-sandbox-\S+\|1$/)
          assert.strictEqual(yield* act(() => page.locator("#exit").innerText()), "")
          assert.strictEqual(yield* act(() => page.locator("iframe").count()), 0)
        }).pipe(Effect.scoped, Effect.provide(TestApp)),
      90_000
    )

    it.live(
      `${viewport.width}×${viewport.height}: an invalid link token ends in onExit({type, code, message})`,
      () =>
        Effect.gen(function*() {
          const { frame, open, page } = yield* setup(viewport)
          yield* open("link-sandbox-not-a-real-token")
          yield* act(() => frame.locator("[data-code='link_token_invalid']").waitFor({ timeout: 10_000 }))
          yield* assertPane(page, frame, "invalid token", { client: "Tracebridge Connect", logo: false, back: false })
          yield* shoot(page, `connect-${viewport.name}-5-invalid-token`)
          assert.strictEqual(yield* act(() => page.locator("#exit").innerText()), "")
          yield* act(() => frame.getByRole("button", { name: "Close" }).last().click())
          yield* act(() => page.locator("#exit").filter({ hasText: "|" }).waitFor({ timeout: 10_000 }))
          const { error, metadata } = yield* act(() => page.evaluate(() => (window as any).exitArgs))
          assert.deepStrictEqual(Object.keys(error).sort(), ["code", "message", "type"])
          assert.strictEqual(error.type, "validation_error")
          assert.strictEqual(error.code, "link_token_invalid")
          assert.match(error.message, /not valid/)
          assert.strictEqual(metadata.status, "failed")
          assert.match(metadata.request_id, /\S/)
          assert.strictEqual(
            yield* act(() => page.locator("#exit").innerText()),
            "validation_error/link_token_invalid|1"
          )
          assert.strictEqual(yield* act(() => page.locator("iframe").count()), 0)
        }).pipe(Effect.scoped, Effect.provide(TestApp)),
      60_000
    )
  }

  it.live(
    "375 wide: the close control gives onExit(null) on a plain close, and the refusal after one",
    () =>
      Effect.gen(function*() {
        const { frame, linkToken, open, page } = yield* setup({ width: 375, height: 740 })
        // the longest name allowed, in one word: it wraps, it never widens the widget
        const longName = "W".repeat(64)
        yield* open(yield* linkToken({ client_name: longName }))
        yield* assertPane(page, frame, "long name", { client: longName, logo: false, step: "Step 1 of 3", back: false })
        yield* act(() => frame.getByRole("button", { name: "Metrc" }).click())
        yield* act(() => frame.locator("#close").click())
        yield* act(() => page.locator("#exit").filter({ hasText: "|" }).waitFor({ timeout: 10_000 }))
        const closed = yield* act(() => page.evaluate(() => (window as any).exitArgs))
        assert.isNull(closed.error)
        assert.strictEqual(closed.metadata.status, "user_exited")
        assert.strictEqual(yield* act(() => page.locator("#exit").innerText()), "none|1")

        // a user who leaves after the state system refused the login: the flow ended in that failure
        yield* open(yield* linkToken())
        yield* act(async () => {
          await frame.getByRole("button", { name: "Metrc" }).click()
          await frame.getByLabel("State").selectOption("CO")
          await frame.getByRole("button", { name: "Continue" }).click()
          await frame.getByLabel("User API key").fill("user_locked")
          await frame.getByRole("button", { name: "Link account" }).click()
          await frame.locator("[data-code='account_locked']").waitFor({ timeout: 10_000 })
          await frame.locator("#close").click()
          await page.locator("#exit").filter({ hasText: "|" }).waitFor({ timeout: 10_000 })
        })
        const failed = yield* act(() => page.evaluate(() => (window as any).exitArgs))
        assert.strictEqual(failed.error.type, "validation_error")
        assert.strictEqual(failed.error.code, "account_locked")
        assert.isString(failed.error.message)
        assert.strictEqual(failed.metadata.status, "failed")
      }).pipe(Effect.scoped, Effect.provide(TestApp)),
    60_000
  )
})
