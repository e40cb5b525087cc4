import { readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ViteUserConfig } from "vitest/config"

const root = path.dirname(fileURLToPath(import.meta.url))

/**
 * The module subpaths each package's `exports` opens (`@tracebridge/core/WebhookSignature`, ...),
 * each to its `src/` module: a test reaches exactly what an importer of the built package can
 * (ADR 0023), and any other deep import fails as it would from `dist/`.
 */
const subpaths = readdirSync(path.join(root, "packages")).flatMap((dir) => {
  let manifest: { readonly name: string; readonly exports?: Record<string, unknown> }
  try {
    manifest = JSON.parse(readFileSync(path.join(root, "packages", dir, "package.json"), "utf8"))
  } catch {
    return []
  }
  return Object.entries(manifest.exports ?? {})
    .filter(([subpath, target]) =>
      /^\.\/[A-Z][A-Za-z0-9]*$/.test(subpath) && typeof target === "object" && target !== null
    )
    .map(([subpath]) => ({
      find: new RegExp(`^${manifest.name}/${subpath.slice(2)}$`),
      replacement: path.join(root, "packages", dir, "src", `${subpath.slice(2)}.ts`)
    }))
})

/**
 * Settings every package's vitest project shares. A project whose modules keep no state between
 * test files sets `isolate: false`: its files then share one module graph per worker instead of
 * loading it again for each file (for core, sandbox and sync that cut the files' collect time
 * from 280 s to 37 s). http keeps isolation: several of its files rely on fresh module state
 * (the metrics registry, the database and rate-limit stores of a file's own layers).
 * Workspace packages resolve to their
 * `src/` so tests never wait for a build (set `TEST_DIST=1` to test the built `dist/`).
 */
export const shared: ViteUserConfig = {
  resolve: {
    alias: process.env.TEST_DIST ? [] : [
      {
        find: /^@tracebridge\/([a-z-]+)$/,
        replacement: path.join(root, "packages/$1/src/index.ts")
      },
      ...subpaths
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    sequence: { concurrent: true },
    env: { TZ: "UTC" },
    testTimeout: 30_000
  }
}
