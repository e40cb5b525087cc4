/**
 * The `tracebridge-sandbox` command as a CI user meets it: `bin/tracebridge-sandbox.mjs`, a checked-in
 * launcher that npm links at install time (so npx never asks the public registry for the name),
 * which builds the bundled sandbox when `dist/` is missing and then runs it.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderDescriptor } from "@tracebridge/core"
import { ControlApi, Registry, SandboxProvider, Standalone } from "@tracebridge/sandbox"
import { spawn } from "node:child_process"
import {
  accessSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const pkgDir = join(root, "packages", "sandbox")
const manifest = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"))
const binPath = manifest.bin["tracebridge-sandbox"] as string
const launcher = join(pkgDir, binPath)

/** The environment of a child: no vitest or npm lifecycle variables leak into it. */
const env = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST") && !k.toLowerCase().startsWith("npm_"))
  )

/** Runs a command without blocking this worker. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string, timeoutMs = 120_000) =>
  new Promise<{ readonly status: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
    const child = spawn(command, args, { cwd, env: env(), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("close", (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })

describe("the tracebridge-sandbox launcher", () => {
  it("is a checked-in, executable node script, not a build output", () => {
    assert.match(binPath, /^\.\/bin\/[^/]+\.mjs$/, "the bin lives in bin/, which is checked in (dist/ is not)")
    assert.isTrue(existsSync(launcher))
    accessSync(launcher, constants.X_OK)
    assert.isTrue(readFileSync(launcher, "utf8").startsWith("#!/usr/bin/env node\n"))
    assert.include(manifest.files, "bin", "published with the package")
    assert.strictEqual(manifest.license, "Apache-2.0")
    assert.include(
      readFileSync(join(pkgDir, "LICENSE"), "utf8"),
      "Apache License\n                           Version 2.0"
    )
  })

  it("is linked into node_modules/.bin by a fresh npm install, before anything is built", async () => {
    // a fresh clone in miniature: the workspace root, the sandbox's package.json (its dependencies
    // left out, so npm has nothing to fetch) and its checked-in bin folder; no dist/
    const dir = mkdtempSync(join(tmpdir(), "tracebridge-launcher-link-"))
    try {
      writeFileSync(
        join(dir, "package.json"),
        JSON.stringify({ name: "fresh-clone", private: true, workspaces: ["packages/*"] })
      )
      const copy = join(dir, "packages", "sandbox")
      mkdirSync(copy, { recursive: true })
      const { dependencies: _, ...bare } = manifest
      writeFileSync(join(copy, "package.json"), JSON.stringify(bare, null, 2))
      cpSync(join(pkgDir, "bin"), join(copy, "bin"), { recursive: true })
      const installed = await run(
        "npm",
        ["install", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", "--no-save"],
        dir,
        60_000
      )
      assert.strictEqual(installed.status, 0, installed.stdout + installed.stderr)
      const link = join(dir, "node_modules", ".bin", "tracebridge-sandbox")
      assert.isTrue(existsSync(link), "npm linked the bin")
      assert.strictEqual(realpathSync(link), realpathSync(join(copy, binPath)))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000)

  it("--help lists the flags with their defaults, each provider's base URL, auth and logins, and the control API", async () => {
    const { status, stderr, stdout } = await run(process.execPath, [launcher, "--help"], root)
    assert.strictEqual(status, 0, stderr)
    assert.strictEqual(stdout, `${Standalone.help()}\n`, "the help of the source it was built from")
    for (const flag of ["--port", "--host", "--seed", "--size", "--reference-date", "--requests-per-second"]) {
      assert.include(stdout, flag)
    }
    assert.include(stdout, `default ${Standalone.DEFAULTS.port}`)
    for (const provider of Registry.installed.providers) {
      const name = SandboxProvider.nameOf(provider)
      const first = ProviderDescriptor.states(provider.module.descriptor)[0]!
      assert.include(stdout, `http://127.0.0.1:4010/${name}/{STATE}`)
      assert.include(stdout, `http://127.0.0.1:4010/${name}/${first}${provider.banner.examplePath}`)
      for (const value of Object.values(provider.logins.good)) assert.include(stdout, value)
    }
    assert.include(stdout, "username = vendor")
    for (const route of ControlApi.routes) assert.include(stdout, route.path)
  })

  it("refuses an unknown flag with exit status 2 and a pointer to --help", async () => {
    const { status, stderr, stdout } = await run(process.execPath, [launcher, "--prot", "4010"], root)
    assert.strictEqual(status, 2)
    assert.strictEqual(stdout, "")
    assert.include(stderr, "unknown option --prot")
    assert.include(stderr, "--help")
  })

  it("builds the bundle from the local TypeScript and esbuild when dist/ is missing, then runs it", async () => {
    // A fresh clone in miniature: the sandbox and the packages it builds against, sources only (no
    // dist/ anywhere), and this checkout's installed dependencies linked in, with workspace links
    // of its own, so the build writes nothing here and downloads nothing.
    const dir = mkdtempSync(join(tmpdir(), "tracebridge-launcher-build-"))
    try {
      const packages = ["core", "adapter-provider-a", "adapter-provider-b", "providers", "sandbox"]
      for (const name of packages) {
        for (const entry of ["src", "package.json", "tsconfig.json", ...(name === "sandbox" ? ["bin"] : [])]) {
          cpSync(join(root, "packages", name, entry), join(dir, "packages", name, entry), { recursive: true })
        }
      }
      mkdirSync(join(dir, "scripts"))
      cpSync(join(root, "scripts", "bundle-sandbox.mjs"), join(dir, "scripts", "bundle-sandbox.mjs"))
      cpSync(join(root, "tsconfig.base.json"), join(dir, "tsconfig.base.json"))
      mkdirSync(join(dir, "node_modules", "@tracebridge"), { recursive: true })
      for (const entry of readdirSync(join(root, "node_modules"))) {
        if (entry !== "@tracebridge") symlinkSync(join(root, "node_modules", entry), join(dir, "node_modules", entry))
      }
      for (const name of packages) {
        symlinkSync(join(dir, "packages", name), join(dir, "node_modules", "@tracebridge", name))
      }
      const copy = join(dir, "packages", "sandbox")
      const copied = join(copy, binPath)
      assert.isFalse(packages.some((name) => existsSync(join(dir, "packages", name, "dist"))))

      const first = await run(process.execPath, [copied, "--help"], dir, 240_000)
      assert.strictEqual(first.status, 0, first.stderr)
      assert.include(first.stderr, "building")
      assert.strictEqual(
        first.stdout,
        `${Standalone.help()}\n`,
        "stdout is the sandbox's own; the build logs to stderr"
      )
      assert.isTrue(existsSync(join(copy, "dist", "tracebridge-sandbox.mjs")))

      const second = await run(process.execPath, [copied, "--help"], dir)
      assert.strictEqual(second.status, 0, second.stderr)
      assert.strictEqual(second.stderr, "", "built once, then loaded")
      assert.strictEqual(second.stdout, first.stdout)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)
})
