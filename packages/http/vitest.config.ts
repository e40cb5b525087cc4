import { configDefaults, defineProject, mergeConfig } from "vitest/config"
import { shared } from "../../vitest.shared.js"

// The Postgres run (`*.pg.test.ts`) needs a database: it is `npm run test:pg` (vitest.pg.config.ts).
export default mergeConfig(
  shared,
  defineProject({ test: { name: "http", exclude: [...configDefaults.exclude, "**/*.pg.test.ts"] } })
)
