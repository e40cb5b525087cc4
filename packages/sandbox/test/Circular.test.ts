/**
 * `npm run circular` (scripts/circular.mjs) sees every import, type-only ones included: a circle
 * closed by an `import type` is a circle all the same (the two modules cannot be understood apart),
 * and the sandbox, where such circles used to hide, has none.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const circular = (...dirs: ReadonlyArray<string>) =>
  spawnSync(process.execPath, [join(root, "scripts/circular.mjs"), ...dirs], { cwd: root, encoding: "utf8" })

describe("scripts/circular.mjs", () => {
  it("fails on a circle closed by a type-only import", () => {
    const dir = mkdtempSync(join(tmpdir(), "circular-"))
    try {
      writeFileSync(
        join(dir, "Store.ts"),
        "import { handler } from \"./Emulator.js\"\nexport class Store { h = handler }\n"
      )
      writeFileSync(
        join(dir, "Emulator.ts"),
        "import type { Store } from \"./Store.js\"\nexport const handler = (store?: Store) => store\n"
      )
      const run = circular(dir)
      assert.strictEqual(run.status, 1, run.stdout + run.stderr)
      assert.match(run.stderr, /import cycle: (Store\.ts → Emulator\.ts|Emulator\.ts → Store\.ts)/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("finds no circle in the sandbox, type imports included", () => {
    const run = circular(join(root, "packages/sandbox/src"))
    assert.strictEqual(run.status, 0, run.stderr)
    assert.match(run.stdout, /no cycles/)
  })
})
