#!/usr/bin/env node
/**
 * `tracebridge-sandbox [--port 4010] [--host 127.0.0.1] [--seed 42] [--size small|large|<packages>]
 * [--reference-date 2026-03-15T00:00:00Z] [--requests-per-second 50]`: the sandbox on a socket, for CI.
 */
import { banner, start } from "./Standalone.js"

const args = process.argv.slice(2)
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  if (i >= 0) return args[i + 1]
  const inline = args.find((a) => a.startsWith(`--${name}=`))
  return inline?.slice(name.length + 3)
}

if (args.includes("--help") || args.includes("-h")) {
  process.stdout.write(
    "Usage: tracebridge-sandbox [--port 4010] [--host 127.0.0.1] [--seed 42] [--size small|large|<packages>] [--reference-date <ISO>] [--requests-per-second 50 (0: no limit)]\n"
  )
  process.exit(0)
}

const port = Number(flag("port") ?? process.env.PORT ?? 4010)
const sizeFlag = flag("size")
const size = sizeFlag === undefined || sizeFlag === "small" || sizeFlag === "large"
  ? sizeFlag
  : { packages: Number(sizeFlag) }
const referenceDate = flag("reference-date")
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(`--port must be a port number, got ${flag("port")}\n`)
  process.exit(2)
}
if (typeof size === "object" && !(Number.isInteger(size.packages) && size.packages > 0)) {
  process.stderr.write(`--size must be small, large or a number of packages, got ${sizeFlag}\n`)
  process.exit(2)
}
const rpsFlag = flag("requests-per-second")
const requestsPerSecond = rpsFlag === undefined ? undefined : Number(rpsFlag)
if (requestsPerSecond !== undefined && !(Number.isFinite(requestsPerSecond) && requestsPerSecond >= 0)) {
  process.stderr.write(`--requests-per-second must be a number, 0 or more, got ${rpsFlag}\n`)
  process.exit(2)
}
if (referenceDate !== undefined && Number.isNaN(Date.parse(referenceDate))) {
  process.stderr.write(`--reference-date must be an ISO 8601 date, got ${referenceDate}\n`)
  process.exit(2)
}

start({
  port,
  host: flag("host") ?? "127.0.0.1",
  seed: flag("seed") ?? "42",
  referenceDate: referenceDate === undefined ? undefined : new Date(Date.parse(referenceDate)).toISOString(),
  size,
  requestsPerSecond
}).then((running) => {
  process.stdout.write(`${banner(running)}\n`)
  const stop = () => running.close().then(() => process.exit(0))
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
}, (error: unknown) => {
  process.stderr.write(`tracebridge-sandbox could not start: ${String(error)}\n`)
  process.exit(1)
})
