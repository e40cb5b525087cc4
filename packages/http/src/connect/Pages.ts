/**
 * The Connect widget's pages and scripts, outside the JSON contract: the hosted page at `/connect`,
 * its script at `/connect/page.js`, and the SDK at `/connect/sdk.js`. Everything is served from here;
 * nothing is loaded from a CDN.
 *
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)
const asset = (name: string) => readFileSync(require.resolve(`@tracebridge/connect/${name}`), "utf8")

const css = `
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#0f172a;background:#fff}
main{max-width:440px;margin:0 auto;padding:24px}h1{font-size:1.35rem;margin:0 0 12px}h1:focus{outline:none}
label{display:block;font-weight:600;margin:14px 0 4px}input,select{width:100%;padding:10px;font:inherit;border:1px solid #94a3b8;border-radius:8px}
input:focus,select:focus,button:focus{outline:3px solid #2563eb;outline-offset:2px}
button{font:inherit;margin-top:16px;padding:10px 16px;border-radius:8px;border:1px solid #1e3a8a;background:#1d4ed8;color:#fff;cursor:pointer;width:100%}
button[disabled]{opacity:.6;cursor:progress}.choices{display:grid;gap:10px}.choice{background:#fff;color:#0f172a;border-color:#94a3b8;text-align:left}
.link{background:none;border:none;color:#1d4ed8;text-decoration:underline;width:auto;padding:4px 0}.hint{color:#475569;font-size:.9rem;margin:6px 0 0}
.error{background:#fef2f2;border:1px solid #fca5a5;color:#991b1b;padding:10px 12px;border-radius:8px}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
`

const page = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Link your account · Tracebridge Connect</title>
<style>${css}</style>
</head>
<body>
<main id="app" aria-live="polite"><h1 tabindex="-1">Loading…</h1></main>
<div id="live" class="sr" role="status" aria-live="assertive"></div>
<script src="/connect/page.js"></script>
</body>
</html>`

/**
 * The routes, as a layer for `HttpApiBuilder.serve`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const sdk = asset("sdk.js")
    const script = asset("page.js")
    const headers = { "cache-control": "no-store", "x-content-type-options": "nosniff" }
    yield* router.get(
      "/connect",
      Effect.succeed(
        HttpServerResponse.html(page).pipe(HttpServerResponse.setHeaders({
          ...headers,
          "content-security-policy":
            "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors *; form-action 'none'; base-uri 'none'"
        }))
      )
    )
    yield* router.get(
      "/connect/page.js",
      Effect.succeed(HttpServerResponse.text(script, { contentType: "text/javascript; charset=utf-8", headers }))
    )
    yield* router.get(
      "/connect/sdk.js",
      Effect.succeed(HttpServerResponse.text(sdk, {
        contentType: "text/javascript; charset=utf-8",
        headers: { ...headers, "access-control-allow-origin": "*" }
      }))
    )
  })
)
