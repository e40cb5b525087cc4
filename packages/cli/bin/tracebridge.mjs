#!/usr/bin/env node
// The `tracebridge` command (the package's `bin`). It is checked in, so that `npm install` links it
// on a fresh clone, before anything is built; `npx tracebridge` then finds it locally and never asks
// the public registry for a package of that name.
//
// It runs ../dist/main.js. When that is missing (a fresh clone, or after a clean), it builds the
// package first with the TypeScript installed in node_modules (`tsc -b`, which builds the packages
// it uses too): nothing is downloaded. Build output goes to stderr, so that stdout stays the
// command's own (`--json` lines).
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..")
const main = join(pkg, "dist", "main.js")

const fail = (message) => {
  process.stderr.write(`tracebridge: ${message}\n`)
  process.exit(1)
}

if (!existsSync(main)) {
  let tsc
  try {
    tsc = createRequire(join(pkg, "package.json")).resolve("typescript/bin/tsc")
  } catch {
    fail(`${main} is missing and cannot be built here: TypeScript is not installed. Run \`npm install\` first.`)
  }
  process.stderr.write("tracebridge: first run, building the command (tsc -b)…\n")
  try {
    execFileSync(process.execPath, [tsc, "-b", "tsconfig.json"], { cwd: pkg, stdio: ["ignore", 2, 2] })
  } catch {
    fail("the build failed (see above); `npm run build -w @tracebridge/cli` runs the same step.")
  }
  if (!existsSync(main)) fail(`the build finished without writing ${main}.`)
}

await import(pathToFileURL(main).href)
