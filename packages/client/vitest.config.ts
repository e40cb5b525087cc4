import { defineProject, mergeConfig } from "vitest/config"
import { shared } from "../../vitest.shared.js"

// Runs the SDK against the built server (`packages/http/dist/main.js`; `npm test` builds first).
export default mergeConfig(
  shared,
  defineProject({ test: { name: "client", testTimeout: 60_000, hookTimeout: 60_000 } })
)
