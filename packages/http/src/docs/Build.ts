/**
 * The docs page's build step, run by the http package's `build` after `tsc`: renders the OpenAPI
 * document of the built `Api` and the guides of `docs/guides/` into `dist/docs.html` (ADR 0013).
 *
 * @since 0.1.0
 */
import { OpenApi } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Page from "./Page.js"

/**
 * The guides in the order the page shows them; any other guide follows, by name.
 *
 * @since 0.1.0
 * @category constants
 */
export const order: ReadonlyArray<string> = ["getting-started", "errors", "paging", "webhooks", "sandbox"]

/**
 * The repository's `docs/guides/` (from `src/docs` and `dist/docs` alike).
 *
 * @since 0.1.0
 * @category constants
 */
export const guidesDirectory = fileURLToPath(new URL("../../../../docs/guides/", import.meta.url))

/**
 * Where the page is written and where the route reads it: `dist/docs.html`.
 *
 * @since 0.1.0
 * @category constants
 */
export const output = fileURLToPath(new URL("../../dist/docs.html", import.meta.url))

/**
 * The guides of a folder (`README.md`, the folder's index on GitHub, is not one).
 *
 * @since 0.1.0
 * @category building
 */
export const readGuides = (directory: string = guidesDirectory): Array<Page.Guide> => {
  if (!existsSync(directory)) return []
  const ids = readdirSync(directory)
    .filter((f) => f.endsWith(".md") && f !== "README.md")
    .map((f) => f.slice(0, -3))
    .sort((a, b) => {
      const ia = order.indexOf(a)
      const ib = order.indexOf(b)
      return (ia === -1 ? order.length : ia) - (ib === -1 ? order.length : ib) || a.localeCompare(b)
    })
  return ids.map((id) => ({ id, markdown: readFileSync(`${directory}/${id}.md`, "utf8") }))
}

/**
 * The page for the current contract and guides.
 *
 * @since 0.1.0
 * @category building
 */
export const html = (guides: ReadonlyArray<Page.Guide> = readGuides()): string =>
  Page.render(OpenApi.fromApi(Api) as unknown as Record<string, unknown>, guides)

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const page = html()
  writeFileSync(output, page)
  console.error(`docs: wrote ${output} (${Buffer.byteLength(page)} bytes)`)
}
