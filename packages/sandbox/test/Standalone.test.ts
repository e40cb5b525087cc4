import { assert, describe, it } from "@effect/vitest"
import { Standalone } from "@tracebridge/sandbox"
import { Effect } from "effect"

const auth = { authorization: `Basic ${btoa("any-vendor-key:user_good")}` }

describe("Standalone", () => {
  it.live("starts on a port, serves both providers' logins and the control API, and resets", () =>
    Effect.acquireUseRelease(
      Effect.promise(() =>
        Standalone.start({ port: 0, host: "127.0.0.1", seed: "42", referenceDate: "2026-03-15T00:00:00.000Z" })
      ),
      (running) =>
        Effect.promise(async () => {
          assert.include(Standalone.banner(running), "user_good")
          const facilities = await (await fetch(`${running.origin}/provider_a/CO/facilities/v2/`, { headers: auth }))
            .json()
          assert.strictEqual(facilities.length, 5)
          const refused = await fetch(`${running.origin}/provider_a/CO/facilities/v2/`, {
            headers: { authorization: `Basic ${btoa("v:user_bad")}` }
          })
          assert.strictEqual(refused.status, 401)
          const license = facilities[0].License.Number
          // Metrc answers lists in lastModified windows of a day at most: the first day before the
          // reference date with two changed packages, read a page of one at a time
          let page: any
          for (let day = 1; day <= 40 && !(page?.Total >= 2); day++) {
            const end = Date.parse("2026-03-15T00:00:00.000Z") - (day - 1) * 86_400_000
            const window = `lastModifiedStart=${new Date(end - 86_400_000).toISOString()}&lastModifiedEnd=${
              new Date(end).toISOString()
            }`
            page = await (await fetch(
              `${running.origin}/provider_a/CO/packages/v2/active?licenseNumber=${license}&${window}&pageSize=1`,
              { headers: auth }
            )).json()
          }
          assert.isAtLeast(page.Total, 2)
          assert.strictEqual(page.Data.length, 1)
          assert.strictEqual(page.TotalPages, page.Total)
          const tooBig = await fetch(
            `${running.origin}/provider_a/CO/packages/v2/active?licenseNumber=${license}&pageSize=21`,
            { headers: auth }
          )
          assert.strictEqual(tooBig.status, 400)
          const state = await (await fetch(`${running.origin}/_sandbox/state`)).json()
          assert.deepStrictEqual(state.worlds, ["provider_a|CO|user_good"])
          const scenario = await fetch(`${running.origin}/_sandbox/scenarios/package_hold`, {
            method: "POST",
            body: JSON.stringify({ provider: "provider_a", state: "CO", login: "user_good", params: {} })
          })
          assert.strictEqual(scenario.status, 200)
          const unknown = await fetch(`${running.origin}/_sandbox/scenarios/meteor`, {
            method: "POST",
            body: JSON.stringify({ provider: "provider_a", state: "CO", login: "user_good" })
          })
          assert.strictEqual(unknown.status, 400)
          await fetch(`${running.origin}/_sandbox/reset`, { method: "POST" })
          const after = await (await fetch(`${running.origin}/_sandbox/state`)).json()
          assert.deepStrictEqual(after.worlds, [])
        }),
      (running) => Effect.promise(() => running.close())
    ))

  it.live("switches a world's faults over HTTP, on the socket, and leaves other worlds alone", () =>
    Effect.acquireUseRelease(
      Effect.promise(() =>
        Standalone.start({ port: 0, host: "127.0.0.1", seed: "42", referenceDate: "2026-03-15T00:00:00.000Z" })
      ),
      (running) =>
        Effect.promise(async () => {
          const facilities = (userKey: string) =>
            fetch(`${running.origin}/provider_a/CO/facilities/v2/`, {
              headers: { authorization: `Basic ${btoa(`v:${userKey}`)}` }
            })
          const put = (fault: unknown) =>
            fetch(`${running.origin}/_sandbox/faults`, {
              method: "PUT",
              body: JSON.stringify({ provider: "provider_a", state: "CO", login: "user_good", fault })
            })
          assert.strictEqual((await put({ kind: "outage" })).status, 200)
          const down = await facilities("user_good")
          assert.strictEqual(down.status, 503)
          assert.include(await down.text(), "Service Unavailable")
          assert.strictEqual((await facilities("user_good_2")).status, 200)

          await put({ kind: "rate_limited", retry_after: 7 })
          const limited = await facilities("user_good")
          assert.strictEqual(limited.status, 429)
          assert.strictEqual(limited.headers.get("retry-after"), "7")

          // held back on a timer, then the normal answer
          await put({ kind: "slow", delay_ms: 20 })
          const slow = await facilities("user_good")
          assert.strictEqual(slow.status, 200)
          assert.strictEqual(((await slow.json()) as ReadonlyArray<unknown>).length, 5)

          const cleared = await fetch(`${running.origin}/_sandbox/faults`, { method: "DELETE" })
          assert.deepStrictEqual(await cleared.json(), { cleared: "all" })
          assert.strictEqual((await facilities("user_good")).status, 200)
        }),
      (running) => Effect.promise(() => running.close())
    ))
})

describe("Standalone burst limit", () => {
  const burst = (requestsPerSecond: number | undefined) =>
    Effect.acquireUseRelease(
      Effect.promise(() =>
        Standalone.start({
          port: 0,
          host: "127.0.0.1",
          seed: "42",
          referenceDate: "2026-03-15T00:00:00.000Z",
          ...(requestsPerSecond === undefined ? {} : { requestsPerSecond })
        })
      ),
      (running) =>
        Effect.promise(async () => {
          const answers = await Promise.all(
            Array.from(
              { length: 80 },
              () => fetch(`${running.origin}/provider_a/CO/unitsofmeasure/v2/active`, { headers: auth })
            )
          )
          return answers.map((r) => ({ status: r.status, retryAfter: r.headers.get("retry-after") }))
        }),
      (running) => Effect.promise(() => running.close())
    )

  it.live("answers a burst past 50 requests a second with 429 and Retry-After, as Metrc does, unless turned off", () =>
    Effect.gen(function*() {
      const limited = yield* burst(undefined)
      const refused = limited.filter((a) => a.status === 429)
      assert.isAtLeast(limited.filter((a) => a.status === 200).length, 50)
      assert.isAbove(refused.length, 0, "a burst of 80 at once meets the limit")
      assert.isTrue(refused.every((a) => Number(a.retryAfter) >= 1))
      const unlimited = yield* burst(0)
      assert.isTrue(unlimited.every((a) => a.status === 200))
    }))
})

describe("the tracebridge-sandbox bin (dist/tracebridge-sandbox.mjs, one bundled module)", () => {
  it.live("starts from its own file, answers both providers, and stops on SIGTERM", () =>
    Effect.promise(async () => {
      const { spawn } = await import("node:child_process")
      const { fileURLToPath } = await import("node:url")
      const pkg = JSON.parse(
        await (await import("node:fs/promises")).readFile(new URL("../package.json", import.meta.url), "utf8")
      )
      const bin = fileURLToPath(new URL(`../${pkg.bin["tracebridge-sandbox"]}`, import.meta.url))
      const child = spawn(process.execPath, [bin, "--port", "0", "--seed", "42"], { stdio: ["ignore", "pipe", "pipe"] })
      let output = ""
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      try {
        const deadline = Date.now() + 15_000
        while (!/http:\/\/127\.0\.0\.1:\d+/.test(output)) {
          if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no banner:\n${output}`)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        const origin = /http:\/\/127\.0\.0\.1:\d+/.exec(output)![0]
        const facilities = await fetch(`${origin}/provider_a/CO/facilities/v2/`, { headers: auth })
        assert.strictEqual(facilities.status, 200)
        assert.strictEqual((await facilities.json()).length, 5)
        child.kill("SIGTERM")
        assert.strictEqual(await exited, 0, output)
      } finally {
        child.kill("SIGKILL")
      }
    }), 30_000)
})
