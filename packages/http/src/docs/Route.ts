/**
 * `/docs`: the reference page (and `/`, which redirects to it) built by `docs/Build.ts` (`dist/docs.html`). It runs no script and
 * loads nothing from elsewhere, so its Content-Security-Policy allows only its own inline style
 * sheet, by hash (ADR 0013).
 *
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as PublicOrigin from "../PublicOrigin.js"

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/**
 * The built page (from `src/docs` and `dist/docs` alike).
 *
 * @since 0.1.0
 * @category constants
 */
export const builtPage = fileURLToPath(new URL("../../dist/docs.html", import.meta.url))

const missing = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tracebridge API reference</title><style>body{font:16px/1.5 system-ui,sans-serif;margin:24px}</style></head>
<body><h1>Tracebridge API reference</h1><p>The reference page is made by the http package's build
(<code>npm run build</code>); until then the OpenAPI document is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p>
</body></html>
`

/**
 * The page's headers: a policy that allows its inline style sheets by hash and nothing else.
 *
 * @since 0.1.0
 * @category headers
 */
export const headersOf = (html: string): Record<string, string> => {
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) =>
    `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`
  )
  return {
    "content-security-policy": `default-src 'none'; style-src ${
      styles.length === 0 ? "'none'" : styles.join(" ")
    }; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache"
  }
}

/**
 * The route, as a layer for `HttpApiBuilder.serve`. The page is read once, when the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const html = existsSync(builtPage) ? readFileSync(builtPage, "utf8") : missing
    const headers = headersOf(html)
    const publicUrl = yield* Effect.orDie(PublicOrigin.configured)
    // The page names the server it was built for, and its examples set `API=` to it; each request
    // sees the origin it reached instead (issue #30). The guides' words on the default stay.
    const pattern = new RegExp(`(server <code>|<code>API=)${PublicOrigin.DEFAULT_ORIGIN.replace(/[.]/g, "\\.")}`, "g")
    const page = (request: HttpServerRequest.HttpServerRequest) => {
      const origin = escapeHtml(PublicOrigin.of(request, publicUrl))
      return html.replace(pattern, (_, lead: string) => `${lead}${origin}`)
    }
    // the root is where a person lands first (issue #30)
    yield* router.get("/", Effect.succeed(HttpServerResponse.redirect("/docs", { status: 302 })))
    yield* router.get(
      "/docs",
      Effect.map(
        HttpServerRequest.HttpServerRequest,
        (request) => HttpServerResponse.html(page(request)).pipe(HttpServerResponse.setHeaders(headers))
      )
    )
  })
)
