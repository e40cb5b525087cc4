// Row 4: generating a sandbox world with 100,000 packages (`Generate.generate`, size
// { packages: 100000 }): the time, and the sha256 of its canonical JSON, equal on every run.
// The baseline is the time to serialise that same world to canonical JSON and sha256 it: the
// cheapest thing one can do with every generated value, so the ratio says how many "writes of
// the world" a generation costs. The pass criteria are absolute: ≤ 2 s and equal hashes.
import { Generate, Registry } from "@tracebridge/sandbox"
import { canonicalHash } from "../lib/canonical.mjs"
import { median, ms, now } from "../lib/stats.mjs"

const options = {
  provider: "provider_a",
  state: "CO",
  seed: "42",
  login: "user_good",
  referenceDate: "2026-03-15T00:00:00.000Z",
  size: { packages: 100_000 },
  ...Registry.seedingOf("provider_a")
}

export default {
  id: 4,
  name: "generate a world of 100,000 packages: time, same hash twice",
  async run({ log, quick }) {
    const runs = quick ? 2 : 3
    const times = []
    const hashTimes = []
    const hashes = []
    let packages = 0
    for (let i = 0; i < runs; i++) {
      let t = now()
      let world = Generate.generate(options)
      times.push(now() - t)
      packages = world.facilities.reduce((n, f) => n + f.packages.length, 0)
      t = now()
      hashes.push(canonicalHash(world))
      hashTimes.push(now() - t)
      world = undefined
      log(`run ${i + 1}: generate ${ms(times.at(-1))}, hash ${ms(hashTimes.at(-1))} ${hashes.at(-1).slice(0, 12)}…`)
    }
    const same = hashes.every((h) => h === hashes[0])
    const time = median(times)
    const ratio = time / median(hashTimes)
    return {
      measured: `median ${ms(time)} (runs ${times.map((t) => Math.round(t)).join(", ")} ms); hash ${
        same ? "equal" : "DIFFERS"
      } ×${runs}`,
      baseline: `canonical JSON + sha256 of it ${ms(median(hashTimes))}`,
      ratio,
      checks: [
        { what: "time (ms)", value: Math.round(time), target: "<= 2000", pass: time <= 2000 },
        { what: "hash equal across runs", value: same, target: "== true", pass: same }
      ],
      note:
        `${packages} packages in all (size {packages: 100000} is the cultivator's count; the other facilities hold a few); seed 42, ` +
        `provider_a CO, a fixed reference date; ${runs} generations in this process, median time (the first ` +
        `includes warm-up). Ratio = generate / (canonical JSON + sha256 of the same world); informative only. ` +
        `sha256 ${hashes[0]}.`,
      data: { times, hashTimes, hashes, packages }
    }
  }
}
