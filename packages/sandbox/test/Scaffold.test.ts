/**
 * `npm run new-provider -- provider_c` on a fresh copy of the repository: it touches exactly two
 * existing source files (the registration lines of the provider catalog and of the sandbox's
 * registry, and nothing else), the new provider type-checks and
 * builds, its own tests and the conformance kit against its emulator pass, and it works in the
 * sandbox over `/v1` (public token, exchange, facilities, packages) with no other edit.
 *
 * The copy shares this repository's installed dependencies (symlinked), with its own workspace
 * links, so nothing here is downloaded and nothing of this checkout changes.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))

const digest = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex")

const filesOf = (dir: string, base = dir): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (name === "node_modules" || name === "dist" || name === "build" || name === ".turbo") return []
    return statSync(path).isDirectory() ? filesOf(path, base) : [path.slice(base.length + 1)]
  })

/** A copy of the checkout's files (tracked and new, not ignored), with its own workspace links. */
const copyRepository = (): string => {
  const copy = mkdtempSync(join(tmpdir(), "tracebridge-scaffold-"))
  const files = execFileSync("git", ["ls-files", "-co", "--exclude-standard"], { cwd: root, encoding: "utf8" })
    .split("\n")
    .filter((f) => f !== "" && existsSync(join(root, f)))
  for (const file of files) {
    mkdirSync(dirname(join(copy, file)), { recursive: true })
    writeFileSync(join(copy, file), readFileSync(join(root, file)))
  }
  mkdirSync(join(copy, "node_modules", "@tracebridge"), { recursive: true })
  for (const entry of readdirSync(join(root, "node_modules"))) {
    if (entry !== "@tracebridge") symlinkSync(join(root, "node_modules", entry), join(copy, "node_modules", entry))
  }
  return copy
}

const linkWorkspace = (copy: string) => {
  for (const pkg of readdirSync(join(copy, "packages"))) {
    const link = join(copy, "node_modules", "@tracebridge", pkg)
    if (!existsSync(link)) symlinkSync(join(copy, "packages", pkg), link)
  }
}

/** Runs a command in the copy without blocking this worker (vitest's own messages keep flowing). */
const run = (copy: string, command: string, args: ReadonlyArray<string>) =>
  new Promise<{ readonly status: number | null; readonly output: string }>((resolve) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST")))
    const child = spawn(command, args, { cwd: copy, env, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), 300_000)
    child.on("close", (status) => {
      clearTimeout(timer)
      resolve({ status, output })
    })
  })

describe("new-provider scaffold", () => {
  it(
    "scaffolds a working provider_c on a fresh copy, touching only the registration lines of the existing sources",
    async () => {
      const copy = copyRepository()
      try {
        linkWorkspace(copy)
        const before = new Map(filesOf(copy).map((f) => [f, digest(join(copy, f))]))

        const scaffolded = await run(copy, "node", ["scripts/new-provider.mjs", "provider_c", "--no-install"])
        assert.strictEqual(scaffolded.status, 0, scaffolded.output)
        linkWorkspace(copy)

        const after = filesOf(copy)
        const changed = [...before.keys()].filter((f) =>
          existsSync(join(copy, f)) && digest(join(copy, f)) !== before.get(f)
        )
        const changedSources = changed.filter((f) => /\.(ts|mjs|js)$/.test(f))
        assert.deepStrictEqual(
          changedSources.sort(),
          ["packages/providers/src/Catalog.ts", "packages/sandbox/src/Registry.ts"],
          changed.join("\n")
        )
        // In each of the two, only the registration lines: one import and one list entry each.
        const linesOf = (text: string) => text.split("\n").map((line) => line.replace(/,$/, ""))
        for (const file of changedSources) {
          const was = linesOf(readFileSync(join(root, file), "utf8"))
          const now = linesOf(readFileSync(join(copy, file), "utf8"))
          assert.deepStrictEqual(was.filter((line) => !now.includes(line)), [], `${file}: lines removed`)
          const added = now.filter((line) => !was.includes(line))
          assert.strictEqual(added.length, 2, `${file}:\n${added.join("\n")}`)
          assert.match(added[0]!, /^import .*(adapter-provider-c|providers\/provider-c\/index\.js)"$/)
          assert.match(added[1]!, /^ {2}(ProviderC\.module|providerC)$/)
        }
        assert.deepStrictEqual(
          changed.filter((f) => !changedSources.includes(f)).sort(),
          ["packages/providers/package.json", "packages/providers/tsconfig.json", "tsconfig.json"]
        )
        const added = after.filter((f) => !before.has(f))
        assert.isTrue(added.length > 0)
        for (const file of added) {
          assert.match(
            file,
            /^packages\/(adapter-provider-c\/|sandbox\/(src|test)\/providers\/provider-c\/)/,
            `a new file outside the provider's own folders: ${file}`
          )
        }

        const lint = await run(copy, "npx", [
          "eslint",
          "packages/adapter-provider-c",
          "packages/sandbox/src/providers/provider-c"
        ])
        assert.strictEqual(lint.status, 0, lint.output)
        const built = await run(copy, "npx", [
          "tsc",
          "-b",
          "packages/sandbox/tsconfig.json",
          "packages/adapter-provider-c/tsconfig.test.json",
          "packages/connect/tsconfig.json"
        ])
        assert.strictEqual(built.status, 0, built.output)
        const bundled = await run(copy, "node", ["scripts/bundle-connect.mjs"])
        assert.strictEqual(bundled.status, 0, bundled.output)

        const tested = await run(copy, "npx", [
          "vitest",
          "run",
          "packages/adapter-provider-c",
          "packages/sandbox/test/providers/provider-c",
          "packages/sandbox/test/Registry.test.ts",
          "packages/providers/test",
          "packages/http/test/ProvidersApi.test.ts"
        ])
        assert.strictEqual(tested.status, 0, tested.output.slice(-4000))
        const summary = /tests: (\d+) passed, (\d+) failed/.exec(tested.output)
        assert.isNotNull(summary, tested.output.slice(-2000))
        assert.isAbove(Number(summary![1]), 40)
        assert.strictEqual(summary![2], "0")
      } finally {
        rmSync(copy, { recursive: true, force: true })
      }
    },
    600_000
  )
})
