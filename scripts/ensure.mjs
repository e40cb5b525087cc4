#!/usr/bin/env node
// Installs dependencies when they are missing or stale, and does nothing otherwise, so that
// `npm test` and `npm start` work on a fresh clone and stay fast on a warm one.
// The stamp is a hash of the lockfile and every workspace package.json.
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const root = new URL("..", import.meta.url).pathname
const stampFile = join(root, "node_modules", ".tracebridge-install")

const inputs = ["package.json", "package-lock.json"]
for (const dir of readdirSync(join(root, "packages"))) {
  const manifest = join("packages", dir, "package.json")
  if (existsSync(join(root, manifest))) inputs.push(manifest)
}

const stamp = () => {
  const hash = createHash("sha256")
  for (const file of inputs) {
    const path = join(root, file)
    hash.update(file).update("\0").update(existsSync(path) ? readFileSync(path) : "").update("\0")
  }
  return hash.digest("hex")
}

const current = stamp()
const installed = existsSync(stampFile) ? readFileSync(stampFile, "utf8").trim() : ""
if (current !== installed || !existsSync(join(root, "node_modules", ".bin", "turbo"))) {
  console.error("[setup] installing dependencies (npm install)…")
  const result = spawnSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" })
  if (result.status !== 0) {
    console.error("[setup] npm install failed")
    process.exit(result.status ?? 1)
  }
  // npm install may rewrite the lockfile: stamp what is on disk now.
  writeFileSync(stampFile, stamp() + "\n")
}

// The browser tests drive Debian's Chromium (never a downloaded browser): install it when missing.
if (!existsSync("/usr/bin/chromium") && process.env.TRACEBRIDGE_SKIP_CHROMIUM !== "1") {
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0
  if (isRoot && existsSync("/usr/bin/apt-get")) {
    console.error("[setup] installing Debian's chromium for the browser tests (apt-get)…")
    const update = spawnSync("apt-get", ["update", "-qq"], { stdio: "inherit" })
    const install = update.status === 0
      ? spawnSync("apt-get", ["install", "-y", "-qq", "chromium"], {
        stdio: "inherit",
        env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
      })
      : update
    if (install.status !== 0) console.error("[setup] could not install chromium; the browser tests will fail")
  } else {
    console.error("[setup] /usr/bin/chromium is missing: install Debian's chromium for the browser tests")
  }
}
