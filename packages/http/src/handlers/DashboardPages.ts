/**
 * The dashboard's pages (issue #33, ADR 0028): the single-page app that `@tracebridge/dashboard`
 * builds with Vite into its `dist/`, read once when the server starts. `/dashboard`, and every
 * client-side route under `/dashboard/` but the internal API (`/dashboard/api/…`) and the assets,
 * answer the app's `index.html`; `/dashboard/assets/…` answer the built files (hashed names, so
 * cached for a year, immutable). Everything is under a strict Content-Security-Policy: scripts,
 * style sheets and calls from this origin only, no inline script or style. When the pages are not
 * built, `/dashboard` answers 503 with a page that says how to build them (never a 500).
 *
 * @since 0.1.0
 */
import { HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, extname, join, relative, sep } from "node:path"

/**
 * The pages' policy: the app's own script, style sheet and API only; images from here or `data:`
 * (the TOTP QR code); frames from here only (the Connect page's preview, and the Connect widget
 * opened to relink a connection: `/connect` is the one page of this origin that lets itself be
 * framed, every other one says `frame-ancestors 'none'`);
 * never framed; no `<base>`; forms post here only.
 *
 * @since 0.1.0
 * @category headers
 */
export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'"
].join("; ")

const common = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  // an invitation's token is in the accept page's address: never sent on as a referrer
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY"
}

/** The headers of the app's page: revalidated every time (its asset names change with each build). */
const pageHeaders = { ...common, "cache-control": "no-cache" }

/** The headers of a built asset: its name holds its hash, so it never changes. */
const assetHeaders = { ...common, "cache-control": "public, max-age=31536000, immutable" }

const types: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".woff": "font/woff",
  ".json": "application/json",
  ".map": "application/json",
  ".txt": "text/plain; charset=utf-8"
}

/**
 * The built app: its page and its assets by path under `/dashboard/assets/`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Built {
  readonly index: string
  readonly assets: ReadonlyMap<string, { readonly body: Uint8Array; readonly contentType: string }>
}

/**
 * Where `@tracebridge/dashboard` put its build (resolved through the package, as installed), or
 * undefined when the package cannot be found.
 *
 * @since 0.1.0
 * @category files
 */
export const distDir = (): string | undefined => {
  try {
    return join(dirname(createRequire(import.meta.url).resolve("@tracebridge/dashboard/package.json")), "dist")
  } catch {
    return undefined
  }
}

/**
 * Reads the build from `dir`: none when its `index.html` is missing.
 *
 * @since 0.1.0
 * @category files
 */
export const read = (dir: string | undefined): Option.Option<Built> => {
  if (dir === undefined || !existsSync(join(dir, "index.html"))) return Option.none()
  const assets = new Map<string, { readonly body: Uint8Array; readonly contentType: string }>()
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const file = join(folder, name)
      if (statSync(file).isDirectory()) walk(file)
      else {
        assets.set(relative(join(dir, "assets"), file).split(sep).join("/"), {
          body: readFileSync(file),
          contentType: types[extname(name).toLowerCase()] ?? "application/octet-stream"
        })
      }
    }
  }
  if (existsSync(join(dir, "assets"))) walk(join(dir, "assets"))
  return Option.some({ index: readFileSync(join(dir, "index.html"), "utf8"), assets })
}

/**
 * The page `/dashboard` answers (503) when the app is not built.
 *
 * @since 0.1.0
 * @category pages
 */
export const notBuilt = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Dashboard not built · Tracebridge</title></head>
<body><main><h1>The dashboard is not built</h1>
<p>This server found no built pages (<code>packages/dashboard/dist</code>). Build them with
<code>npm run build</code> (or <code>npx turbo run build --filter=@tracebridge/dashboard</code>), then restart the
server. <code>npm start</code> builds them for you.</p>
<p>The dashboard's API under <code>/dashboard/api</code> works without them.</p></main></body></html>
`

const pathOf = (request: HttpServerRequest.HttpServerRequest) => request.url.split("?")[0]!

/**
 * The handlers over a build (or none): the app's page for a client route, and an asset.
 *
 * @since 0.1.0
 * @category handlers
 */
export const handlers = (built: Option.Option<Built>) => {
  const page = Option.match(built, {
    onNone: () =>
      HttpServerResponse.html(notBuilt).pipe(
        HttpServerResponse.setStatus(503),
        HttpServerResponse.setHeaders({ ...common, "cache-control": "no-store" })
      ),
    onSome: (b) => HttpServerResponse.html(b.index).pipe(HttpServerResponse.setHeaders(pageHeaders))
  })
  /** `/dashboard`, `/dashboard/accept` and any client route; the API's unknown paths stay the API's 404. */
  const app = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const path = pathOf(request)
    return path === "/dashboard/api" || path.startsWith("/dashboard/api/")
      ? Effect.fail(new HttpServerError.RouteNotFound({ request }))
      : Effect.succeed(page)
  })
  const asset = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const name = decodeURIComponent(pathOf(request).slice("/dashboard/assets/".length))
    const found = Option.flatMap(built, (b) => Option.fromNullable(b.assets.get(name)))
    return Option.isNone(found)
      ? Effect.fail(new HttpServerError.RouteNotFound({ request }))
      : Effect.succeed(
        HttpServerResponse.uint8Array(found.value.body, { contentType: found.value.contentType }).pipe(
          HttpServerResponse.setHeaders(assetHeaders)
        )
      )
  })
  return { app, asset }
}
