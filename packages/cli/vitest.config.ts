import { defineProject, mergeConfig } from "vitest/config"
import { shared } from "../../vitest.shared.js"

// Runs the built `tracebridge` command against the built server (`packages/http/dist/main.js`;
// `npm test` builds both first).
export default mergeConfig(
  shared,
  defineProject({ test: { name: "cli", testTimeout: 90_000, hookTimeout: 60_000 } })
)
