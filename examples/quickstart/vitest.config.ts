import { defineProject, mergeConfig } from "vitest/config"
import { shared } from "../../vitest.shared.js"

// Drives the quickstart in Chromium: it needs packages/http built (`npm test` builds first).
export default mergeConfig(shared, defineProject({ test: { name: "quickstart", testTimeout: 90_000, hookTimeout: 90_000 } }))
