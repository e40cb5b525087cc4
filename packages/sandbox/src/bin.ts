#!/usr/bin/env node
/**
 * `tracebridge-sandbox [--port 4010] [--host 127.0.0.1] [--seed 42] [--size small|large|<packages>]
 * [--reference-date 2026-03-15T00:00:00Z] [--requests-per-second 50] [--json]`: the sandbox on a socket,
 * for CI. `--json` prints one JSON line (`started`) instead of the banner, once it listens.
 * `--help` lists the flags, each provider's base URL, auth and test logins, and the control API.
 *
 * Bundled into `dist/tracebridge-sandbox.mjs`; the package's bin is `bin/tracebridge-sandbox.mjs`, a
 * checked-in launcher that builds the bundle when it is missing (a fresh clone) and loads it.
 */
import { banner, DEFAULTS, help, start, started } from "./Standalone.js"

const FLAGS = ["port", "host", "seed", "size", "reference-date", "requests-per-second"] as const

const argv = process.argv.slice(2)
const json = argv.includes("--json")
const args = argv.filter((arg) => arg !== "--json")

if (args.includes("--help") || args.includes("-h")) {
  process.stdout.write(`${help()}\n`)
  process.exit(0)
}

function usage(problem: string): never {
  process.stderr.write(`tracebridge-sandbox: ${problem}\nRun tracebridge-sandbox --help for the flags.\n`)
  return process.exit(2)
}

const given = new Map<string, string>()
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!
  const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg)
  if (match === null) usage(`unexpected argument ${arg}`)
  const name = match[1]!
  if (!(FLAGS as ReadonlyArray<string>).includes(name)) usage(`unknown option --${name}`)
  const value = match[2] ?? args[++i]
  if (value === undefined) usage(`--${name} needs a value`)
  given.set(name, value)
}
const flag = (name: typeof FLAGS[number]): string | undefined => given.get(name)

const port = Number(flag("port") ?? process.env.PORT ?? DEFAULTS.port)
const sizeFlag = flag("size")
const size = sizeFlag === undefined || sizeFlag === "small" || sizeFlag === "large"
  ? sizeFlag
  : { packages: Number(sizeFlag) }
const referenceDate = flag("reference-date")
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  usage(`--port must be a port number, got ${flag("port") ?? process.env.PORT}`)
}
if (typeof size === "object" && !(Number.isInteger(size.packages) && size.packages > 0)) {
  usage(`--size must be small, large or a number of packages, got ${sizeFlag}`)
}
const rpsFlag = flag("requests-per-second")
const requestsPerSecond = rpsFlag === undefined ? undefined : Number(rpsFlag)
if (requestsPerSecond !== undefined && !(Number.isFinite(requestsPerSecond) && requestsPerSecond >= 0)) {
  usage(`--requests-per-second must be a number, 0 or more, got ${rpsFlag}`)
}
if (referenceDate !== undefined && Number.isNaN(Date.parse(referenceDate))) {
  usage(`--reference-date must be an ISO 8601 date, got ${referenceDate}`)
}

start({
  port,
  host: flag("host") ?? DEFAULTS.host,
  seed: flag("seed") ?? DEFAULTS.seed,
  referenceDate: referenceDate === undefined ? undefined : new Date(Date.parse(referenceDate)).toISOString(),
  size,
  requestsPerSecond
}).then((running) => {
  process.stdout.write(`${json ? JSON.stringify(started(running)) : banner(running)}\n`)
  const stop = () => running.close().then(() => process.exit(0))
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
}, (error: unknown) => {
  process.stderr.write(`tracebridge-sandbox could not start: ${String(error)}\n`)
  process.exit(1)
})
