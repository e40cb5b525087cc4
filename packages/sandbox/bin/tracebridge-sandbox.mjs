#!/usr/bin/env node
// The `tracebridge-sandbox` command (the package's `bin`). It is checked in, so that `npm install`
// links it on a fresh clone, before anything is built; npx then finds it locally and never asks the
// public registry for a package of that name.
//
// It loads the bundled sandbox, ../dist/tracebridge-sandbox.mjs. When that is missing (a fresh
// clone, or after a clean), it builds it first, as the package's `build` script does
// (`tsc -b tsconfig.json`, then scripts/bundle-sandbox.mjs), with the TypeScript and esbuild
// installed in node_modules: nothing is downloaded. Build output goes to stderr, so that stdout
// stays the sandbox's own (`--help`, the banner).
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..")
const bundle = join(pkg, "dist", "tracebridge-sandbox.mjs")

const fail = (message) => {
  process.stderr.write(`tracebridge-sandbox: ${message}\n`)
  process.exit(1)
}

if (!existsSync(bundle)) {
  const require = createRequire(join(pkg, "package.json"))
  const bundler = join(pkg, "..", "..", "scripts", "bundle-sandbox.mjs")
  let tsc
  try {
    tsc = require.resolve("typescript/bin/tsc")
    require.resolve("esbuild")
  } catch {
    fail(
      `${bundle} is missing and cannot be built here: TypeScript and esbuild are not installed. ` +
        "Run `npm install` at the repository root first."
    )
  }
  if (!existsSync(bundler)) fail(`${bundle} is missing and ${bundler} is not there to build it.`)
  process.stderr.write("tracebridge-sandbox: first run, building the sandbox (tsc -b, then one bundle)…\n")
  const run = (args) => execFileSync(process.execPath, args, { cwd: pkg, stdio: ["ignore", 2, 2] })
  try {
    run([tsc, "-b", "tsconfig.json"])
    run([bundler])
  } catch {
    fail("the build failed (see above); `npm run build -w @tracebridge/sandbox` runs the same steps.")
  }
  if (!existsSync(bundle)) fail(`the build finished without writing ${bundle}.`)
  process.stderr.write("tracebridge-sandbox: built.\n")
}

await import(pathToFileURL(bundle).href)
