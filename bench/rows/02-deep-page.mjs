// Row 2: on a facility of 100,000 packages, page 1000 against page 1 (per_page=100).
//
// The spawned HTTP server cannot be given a world size (its sandbox is built in
// services/Providers.ts with the default size and no setting for it), so this row measures
// through the port: the real provider_a adapter's `packages.list` against the in-process
// emulator over a sandbox with `size: { packages: 100_000 }`, which is what the /v1 handler
// calls under its auth, query decoding and envelope.
import { makeInProcess } from "../lib/inprocess.mjs"
import { median, ms, now, percentile, round, timeCalls } from "../lib/stats.mjs"

export default {
  id: 2,
  name: "page 1000 vs page 1 (per_page=100) on 100,000 packages",
  async run({ log, quick }) {
    const n = quick ? 10 : 20
    const warmup = 3
    const t = now()
    const env = makeInProcess({ packages: 100_000 })
    try {
      const world = env.world()
      const data = [...world.facilities].sort((a, b) => b.packages.length - a.packages.length)[0]
      const facility = data.facility.id
      const total = data.packages.length
      log(`world generated in ${ms(now() - t)}; facility ${data.role} has ${total} packages`)
      const list = (page) =>
        env.run((port) => port.list("packages", env.session, facility, {}, { page, per_page: 100 }))
      const first = await list(1)
      const deep = await list(1000)
      if (first.items.length !== 100 || deep.items.length === 0) {
        throw new Error(`unexpected pages: page 1 has ${first.items.length} items, page 1000 ${deep.items.length}`)
      }
      // Alternate the two so that drift (GC, JIT) hits both alike.
      const p1 = []
      const p1000 = []
      for (let i = 0; i < warmup; i++) {
        await list(1)
        await list(1000)
      }
      for (let i = 0; i < n; i++) {
        p1.push(...(await timeCalls(() => list(1), { n: 1, warmup: 0 })))
        p1000.push(...(await timeCalls(() => list(1000), { n: 1, warmup: 0 })))
      }
      const ratio = median(p1000) / median(p1)
      return {
        measured: `page 1000: median ${ms(median(p1000))}, p90 ${ms(percentile(p1000, 90))}`,
        baseline: `page 1: median ${ms(median(p1))}, p90 ${ms(percentile(p1, 90))}`,
        ratio,
        checks: [{ what: "latency ratio", value: round(ratio, 3), target: "<= 1.5", pass: ratio <= 1.5 }],
        note: `In process, not over HTTP: the spawned server has no setting for a world size, so this is the ` +
          `provider_a adapter's packages.list (the port /v1 calls) against the in-process emulator, on the ` +
          `${data.role} facility of a size {packages: 100000} world (${total} packages, page 1000 has ` +
          `${deep.items.length} items). Median of ${n} alternating calls each after ${warmup} warm-ups. Ratio = page 1000 median / page 1 median.`,
        data: { page1: p1, page1000: p1000, packages: total, pagination: first.pagination }
      }
    } finally {
      await env.dispose()
    }
  }
}
