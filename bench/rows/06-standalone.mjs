// Row 6: the standalone sandbox (`tracebridge-sandbox --port … --seed 42`, packages/sandbox's bin)
// from spawn to its first successful answer to a provider call (GET /provider_a/CO/facilities/v2/
// with the documented good login, which generates the default world), and its RSS after that.
// Baseline: the same for a minimal node:http server script (first 200 to any request).
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { root } from "../lib/api.mjs"
import { freePort, rssOf, sleep, start } from "../lib/proc.mjs"
import { mb, median, ms, now, round } from "../lib/stats.mjs"

const bin = join(root, "packages", "sandbox", "dist", "tracebridge-sandbox.mjs")
const minimal = fileURLToPath(new URL("../lib/minimal-server.mjs", import.meta.url))

/** Spawn → first 2xx answer of `path` (polled every 5 ms), then RSS after a short settle. */
const readiness = async (args, path, headers = {}) => {
  const port = await freePort()
  const t = now()
  const proc = start(process.execPath, [...args(port)])
  try {
    const deadline = t + 30_000
    for (;;) {
      if (!proc.alive()) throw new Error(`exited before answering:\n${proc.output().slice(-2000)}`)
      const ok = await fetch(`http://127.0.0.1:${port}${path}`, { headers }).then(async (r) => {
        await r.arrayBuffer()
        return r.ok
      }, () => false)
      if (ok) break
      if (now() > deadline) throw new Error(`no answer within 30 s:\n${proc.output().slice(-2000)}`)
      await sleep(5)
    }
    const ready = now() - t
    await sleep(200)
    return { ready, rss: rssOf(proc.pid) }
  } finally {
    await proc.stop()
  }
}

export default {
  id: 6,
  name: "standalone sandbox: spawn → first answer, and RSS",
  async run({ log, quick }) {
    const runs = quick ? 1 : 3
    const ours = []
    const base = []
    const auth = { authorization: `Basic ${btoa("any-vendor-key:user_good")}` }
    for (let i = 0; i < runs; i++) {
      ours.push(
        await readiness((port) => [bin, "--port", String(port), "--seed", "42"], "/provider_a/CO/facilities/v2/", auth)
      )
      base.push(await readiness((port) => [minimal, String(port)], "/"))
      log(
        `run ${i + 1}: sandbox ${ms(ours.at(-1).ready)} ${mb(ours.at(-1).rss)}; minimal ${ms(base.at(-1).ready)} ${
          mb(base.at(-1).rss)
        }`
      )
    }
    const ready = median(ours.map((r) => r.ready))
    const rss = median(ours.map((r) => r.rss))
    const baseReady = median(base.map((r) => r.ready))
    const baseRss = median(base.map((r) => r.rss))
    const ratio = ready / baseReady
    return {
      measured: `ready ${ms(ready)}, RSS ${mb(rss)}`,
      baseline: `minimal node:http ready ${ms(baseReady)}, RSS ${mb(baseRss)}`,
      ratio,
      checks: [
        { what: "ready (ms)", value: Math.round(ready), target: "<= 1500", pass: ready <= 1500 },
        { what: "RSS (MB)", value: Math.round(rss / 1_048_576), target: "<= 200", pass: rss <= 200 * 1_048_576 }
      ],
      note: `Median of ${runs} spawns each. Ready = spawn until the first 200 of GET /provider_a/CO/facilities/v2/ ` +
        `(good login; the default world is generated on it), polled every 5 ms; RSS = VmRSS 200 ms later. ` +
        `Ratio = ready time / the minimal server's (informative); RSS is ${
          round(rss / baseRss, 2)
        }× the minimal server's.`,
      data: { ours, baseline: base }
    }
  }
}
