/**
 * The Connect widget's pages and scripts, outside the JSON contract: the hosted page at `/connect`,
 * its script at `/connect/page.js`, and the SDK at `/connect/sdk.js`. Everything is served from here;
 * nothing is loaded from a CDN.
 *
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as RedirectUri from "@tracebridge/api/RedirectUri"
import { Effect, Option } from "effect"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { Accounts } from "../persistence/Accounts.js"
import { Connections } from "../services/Connections.js"

const require = createRequire(import.meta.url)
const asset = (name: string) => readFileSync(require.resolve(`@tracebridge/connect/${name}`), "utf8")

const css = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#0f172a;background:#fff}
main{max-width:440px;margin:0 auto;padding:12px 20px 20px;overflow-wrap:anywhere}h1{font-size:1.3rem;line-height:1.3;margin:4px 0 12px}h1:focus{outline:none}
header{margin:0 -8px 4px}.bar{display:grid;grid-template-columns:auto minmax(0,1fr) auto;align-items:center;gap:4px;min-height:44px}
.brand{display:flex;align-items:center;justify-content:center;gap:8px;min-width:0;font-weight:600;font-size:.95rem}
.brand span{overflow-wrap:anywhere;text-align:center;min-width:0}.brand img{width:28px;height:28px;object-fit:contain;border-radius:6px;flex:none}
button.icon{width:auto;margin:0;padding:8px;background:none;border:none;color:#1d4ed8;font-weight:600;min-height:44px;min-width:44px}
.icon-space{width:44px}.back{justify-self:start;text-align:left;padding-left:4px}.close{justify-self:end;font-size:1.15rem;color:#334155!important}
.steps{display:flex;align-items:center;gap:10px;margin:0 0 6px;color:#475569;font-size:.85rem;font-weight:600}
.dots{display:inline-flex;gap:4px}.dot{width:22px;height:4px;border-radius:2px;background:#cbd5e1}.dot.on{background:#1d4ed8}
label{display:block;font-weight:600;margin:14px 0 4px}input,select{width:100%;min-width:0;padding:10px;font:inherit;border:1px solid #94a3b8;border-radius:8px;background:#fff}
input:focus,select:focus,button:focus-visible{outline:3px solid #2563eb;outline-offset:2px}
button{font:inherit;margin-top:16px;padding:10px 16px;border-radius:8px;border:1px solid #1e3a8a;background:#1d4ed8;color:#fff;cursor:pointer;width:100%}
button[disabled]{opacity:.6;cursor:progress}.choices{display:grid;gap:10px}.choice{margin:0;background:#fff;color:#0f172a;border-color:#94a3b8;text-align:left}
.choice:hover{border-color:#1d4ed8;background:#eff6ff}.lead{margin:0 0 16px;color:#334155}.hint{color:#475569;font-size:.9rem;margin:6px 0 0;overflow-wrap:anywhere}
.sandbox{background:#f1f5f9;border-radius:8px;padding:8px 10px;margin-top:14px}
.error{background:#fef2f2;border:1px solid #fca5a5;color:#991b1b;padding:10px 12px;border-radius:8px;margin:0 0 8px;overflow-wrap:anywhere}
.tick{width:56px;height:56px;border-radius:50%;background:#dcfce7;color:#166534;font-size:30px;line-height:56px;text-align:center;margin:20px auto 12px}
.center h1,.center .lead,.center .steps{text-align:center;justify-content:center}
.foot{margin:24px 0 0;color:#64748b;font-size:.78rem;text-align:center}
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
<main id="app"><h1 tabindex="-1">Loading…</h1></main>
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
    const connections = yield* Connections
    const accounts = yield* Accounts
    /**
     * Who may frame the page (issue #28, ADR 0019): from the link token and its organisation,
     * never `*` and never from the query (`parent_origin` only tells the page where to post).
     */
    const ancestorsOf = (linkToken: string) =>
      Effect.gen(function*() {
        const stored = linkToken === "" ? Option.none() : yield* connections.getLinkToken(linkToken)
        if (Option.isNone(stored)) {
          return RedirectUri.frameAncestors({
            sandbox: linkToken.startsWith("link-sandbox-"),
            redirectUri: null,
            allowedOrigins: []
          })
        }
        const organisation = yield* accounts.getOrganisation(stored.value.organisation_id)
        return RedirectUri.frameAncestors({
          sandbox: stored.value.environment === "sandbox",
          redirectUri: stored.value.redirect_uri,
          allowedOrigins: Option.match(organisation, { onNone: () => [], onSome: (o) => o.redirect_origins ?? [] })
        })
      })
    yield* router.get(
      "/connect",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const query = new URL(request.url, "http://connect.invalid").searchParams
        const ancestors = yield* ancestorsOf(query.get("link_token") ?? "")
        return HttpServerResponse.html(page).pipe(HttpServerResponse.setHeaders({
          ...headers,
          "content-security-policy":
            `default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src https:; frame-ancestors ${
              ancestors.join(" ")
            }; form-action 'none'; base-uri 'none'`
        }))
      })
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
