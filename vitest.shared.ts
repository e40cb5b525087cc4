import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ViteUserConfig } from "vitest/config"

const root = path.dirname(fileURLToPath(import.meta.url))

/**
 * Settings every package's vitest project shares. Workspace packages resolve to their
 * `src/` so tests never wait for a build (set `TEST_DIST=1` to test the built `dist/`).
 */
export const shared: ViteUserConfig = {
  resolve: {
    alias: process.env.TEST_DIST ? [] : [
      {
        find: /^@tracebridge\/([a-z-]+)$/,
        replacement: path.join(root, "packages/$1/src/index.ts")
      },
      {
        find: /^@tracebridge\/([a-z-]+)\/(?!internal\/)(.+)$/,
        replacement: path.join(root, "packages/$1/src/$2.ts")
      }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    sequence: { concurrent: true },
    env: { TZ: "UTC" },
    testTimeout: 30_000
  }
}
