/**
 * The dashboard's pages as http serves them (ADR 0028), without a server: the build read from a
 * folder (its page, and its assets with their content types), and when there is no build, a 503
 * page that says how to make one (never a 500). `/dashboard/api/…` is never the app's.
 * (The built pages through the real server, in Chromium: packages/dashboard/test/Pages.test.ts.)
 */
import type { HttpServerResponse } from "@effect/platform"
import { HttpServerRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Option } from "effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as DashboardPages from "../src/handlers/DashboardPages.js"

const at = <E>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, HttpServerRequest.HttpServerRequest>,
  path: string
) =>
  Effect.exit(
    Effect.provideService(
      handler,
      HttpServerRequest.HttpServerRequest,
      HttpServerRequest.fromWeb(new Request(`http://127.0.0.1${path}`))
    )
  )

const textOf = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag === "Uint8Array" ? new TextDecoder().decode(response.body.body) : ""

describe("Dashboard pages", () => {
  it.effect("without a build, /dashboard and its routes answer 503 saying how to build; the API's paths are not the app's", () =>
    Effect.gen(function*() {
      const { app, asset } = DashboardPages.handlers(DashboardPages.read(join(tmpdir(), "tracebridge-no-such-dist")))
      for (const path of ["/dashboard", "/dashboard/keys", "/dashboard/accept?token=tbi_x"]) {
        const exit = yield* at(app, path)
        assert.isTrue(Exit.isSuccess(exit), path)
        const response = (exit as Exit.Success<HttpServerResponse.HttpServerResponse, unknown>).value
        assert.strictEqual(response.status, 503, path)
        assert.strictEqual(response.headers["content-security-policy"], DashboardPages.CSP)
        assert.include(textOf(response), "npm run build")
      }
      for (const path of ["/dashboard/api/unknown", "/dashboard/api"]) {
        const exit = yield* at(app, path)
        assert.isTrue(Exit.isFailure(exit), path)
      }
      assert.isTrue(Exit.isFailure(yield* at(asset, "/dashboard/assets/index.js")))
      assert.isTrue(Option.isNone(DashboardPages.read(undefined)))
    }))

  it.effect("a build is read once: its page for every route, its assets with their types and a year's cache", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "tracebridge-dist-"))
      try {
        mkdirSync(join(dir, "assets"))
        writeFileSync(
          join(dir, "index.html"),
          `<!DOCTYPE html><script type="module" src="/dashboard/assets/a-1.js"></script>`
        )
        writeFileSync(join(dir, "assets", "a-1.js"), "export {}")
        writeFileSync(join(dir, "assets", "s-1.css"), "body{}")
        const { app, asset } = DashboardPages.handlers(DashboardPages.read(dir))
        const page = yield* Effect.flatten(at(app, "/dashboard/logs/req_1"))
        assert.strictEqual(page.status, 200)
        assert.strictEqual(page.headers["cache-control"], "no-cache")
        assert.strictEqual(page.headers["content-security-policy"], DashboardPages.CSP)
        assert.include(textOf(page), "/dashboard/assets/a-1.js")
        const js = yield* Effect.flatten(at(asset, "/dashboard/assets/a-1.js"))
        assert.strictEqual(js.status, 200)
        assert.strictEqual(js.headers["cache-control"], "public, max-age=31536000, immutable")
        assert.include(js.body._tag === "Uint8Array" ? js.body.contentType : "", "text/javascript")
        const css = yield* Effect.flatten(at(asset, "/dashboard/assets/s-1.css"))
        assert.include(css.body._tag === "Uint8Array" ? css.body.contentType : "", "text/css")
        assert.isTrue(Exit.isFailure(yield* at(asset, "/dashboard/assets/../index.html")))
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }))
})
