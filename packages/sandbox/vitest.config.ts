import { defineProject, mergeConfig } from "vitest/config"
import { shared } from "../../vitest.shared.js"

// isolate: false (shared.ts): its modules hold no state between files, so they load once per worker
export default mergeConfig(shared, defineProject({ test: { name: "sandbox", isolate: false } }))
