// Row 8's upstream: the standalone sandbox (`Standalone.start`, what `tracebridge-sandbox` runs)
// as a child process of its own, with a counter on its server's `request` event: every request it
// receives and every status it answers, by kind of call. The counts are read (and reset) on a
// second loopback port, so that the emulator's own server is left exactly as the CLI has it.
//   node bench/lib/counting-sandbox.mjs <requests-per-second> <packages per facility> [seed]
// prints `ready <emulator origin> <counts origin>` once both listen.
//   GET <counts origin>/counts          {"requests":…,"statuses":{"200":…,"429":…},"kinds":{…},"paths":{…},"first":…,"last":…}
//   GET <counts origin>/times           also each request's arrival (epoch ms, the emulator's clock) and status
//   POST <counts origin>/reset          zeroes them
import { Standalone } from "@tracebridge/sandbox"
import { createServer } from "node:http"

const [rpsArg, packagesArg, seed = "42"] = process.argv.slice(2)
const requestsPerSecond = Number(rpsArg)
const packages = Number(packagesArg)
if (!Number.isFinite(requestsPerSecond) || !Number.isInteger(packages) || packages <= 0) {
  process.stderr.write("usage: counting-sandbox.mjs <requests-per-second> <packages> [seed]\n")
  process.exit(2)
}

const running = await Standalone.start({
  port: 0,
  host: "127.0.0.1",
  seed,
  size: { packages },
  requestsPerSecond
})

/** What a provider_a path asks for: the package lists, a package's lab results or source harvests, … */
const kindOf = (url) => {
  const path = url.split("?")[0]
  if (/\/packages\/v2\/(active|onhold|inactive)\/?$/.test(path)) return "package list"
  if (/\/labtests\/v2\/results\/?$/.test(path)) return "lab results"
  if (/\/packages\/v2\/[^/]+\/source\/harvests\/?$/.test(path)) return "source harvests"
  if (path.includes("/_sandbox/")) return "control"
  return "other"
}

let counts
let arrivals
const reset = () => {
  counts = { requests: 0, statuses: {}, kinds: {}, paths: {}, first: null, last: null }
  arrivals = []
}
reset()

running.server.on("request", (req, res) => {
  const now = Date.now()
  counts.requests++
  counts.first ??= now
  counts.last = now
  const kind = kindOf(req.url ?? "/")
  counts.kinds[kind] = (counts.kinds[kind] ?? 0) + 1
  // by path, ids and the state left out: `/packages/v2/{n}/source/harvests`
  const path = (req.url ?? "/").split("?")[0].replace(/^\/provider_[ab]\/[A-Z]{2}/, "").replace(
    /\/\d+(?=\/|$)/g,
    "/{n}"
  )
  counts.paths[path] = (counts.paths[path] ?? 0) + 1
  const mine = counts
  const arrival = [now, 0]
  arrivals.push(arrival)
  res.on("finish", () => {
    mine.statuses[res.statusCode] = (mine.statuses[res.statusCode] ?? 0) + 1
    arrival[1] = res.statusCode
  })
})

const control = createServer((req, res) => {
  if (req.method === "POST" && req.url === "/reset") reset()
  const body = req.url === "/times" ? { ...counts, arrivals } : counts
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))
})
control.listen(0, "127.0.0.1", () => {
  process.stdout.write(`ready ${running.origin} http://127.0.0.1:${control.address().port}\n`)
})

const stop = () => {
  control.close()
  running.close().then(() => process.exit(0))
  setTimeout(() => process.exit(0), 1_000).unref()
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
