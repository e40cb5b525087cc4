/**
 * Real Chromium for the Connect widget's tests: playwright-core driving Debian's /usr/bin/chromium
 * (never a downloaded browser), and an integrator page on its own origin that loads the SDK from
 * the API and records what the widget hands back (`#result`, `#exit`, `#events`, `window.exitArgs`).
 */
import { Effect } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { chromium } from "playwright-core"

/** The integrator's page: a Link button, and what the SDK's callbacks received. */
export const integratorPage = (api: string) =>
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Integrator</title>
<style>body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1c2430;background:#f6f7f9}
header{background:#14532d;color:#fff;padding:14px 20px;font-weight:700}main{padding:20px;max-width:720px}
button{font:inherit;padding:10px 16px;border-radius:8px;border:1px solid #14532d;background:#15803d;color:#fff}
p,ol{overflow-wrap:anywhere}</style></head><body>
<header>Green Leaf Dispensary · Compliance</header>
<main><p>Link your state system account to import packages and transfers.</p>
<button id="open">Link account</button>
<p id="result"></p><p id="exit"></p><ol id="events"></ol></main>
<script src="${api}/connect/sdk.js"></script>
<script>
  const q = new URLSearchParams(location.search)
  const handle = Tracebridge.Connect.create({
    token: q.get("token") || "",
    receivedRedirectUri: location.pathname === "/callback" ? location.href : undefined,
    onSuccess: (publicToken, metadata) => { document.getElementById("result").textContent = publicToken + "|" + (window.terminals = (window.terminals || 0) + 1) },
    onExit: (error, metadata) => { window.exitArgs = { error, metadata }; document.getElementById("exit").textContent = (error ? error.type + "/" + error.code : "none") + "|" + (window.terminals = (window.terminals || 0) + 1) },
    onEvent: (name, metadata) => { const li = document.createElement("li"); li.textContent = name + ":" + (metadata.link_session_id ? "session" : "nosession"); document.getElementById("events").append(li) }
  })
  document.getElementById("open").addEventListener("click", () => handle.open())
  if (location.pathname === "/callback") handle.open()
</script></body></html>`

/** Serves the integrator page on a port of its own (another origin than the API's). */
export const serveIntegrator = (api: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ server: Server; origin: string }>((resolve) => {
        const server = createServer((_req, res) => {
          res.setHeader("content-type", "text/html")
          res.end(integratorPage(api))
        })
        server.listen(
          0,
          "127.0.0.1",
          () => resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
        )
      })
    ),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

/** Headless Chromium from the system, closed with the scope. */
export const launch = Effect.acquireRelease(
  Effect.promise(() =>
    chromium.launch({
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
        "--disable-dev-shm-usage"
      ]
    })
  ),
  (browser) => Effect.promise(() => browser.close())
)
