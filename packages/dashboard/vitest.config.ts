import { defineProject, mergeConfig } from "vitest/config"
import { shared } from "../../vitest.shared.js"

// The browser tests start the built server (packages/http/dist) and drive Chromium: one file at a
// time, each test in order.
export default mergeConfig(
  shared,
  defineProject({ test: { name: "dashboard", sequence: { concurrent: false }, testTimeout: 120_000, hookTimeout: 120_000 } })
)
