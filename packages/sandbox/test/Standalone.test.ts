import { assert, describe, it } from "@effect/vitest"
import { ProviderDescriptor } from "@tracebridge/core"
import { ControlApi, Registry, SandboxProvider, Scenario, Standalone } from "@tracebridge/sandbox"
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

describe("Standalone answers a CI user's mistakes plainly", () => {
  it.live("401 with a Basic challenge, and 404 for a path nothing serves: each provider, the control API, the root", () =>
    Effect.acquireUseRelease(
      Effect.promise(() =>
        Standalone.start({ port: 0, host: "127.0.0.1", seed: "42", referenceDate: "2026-03-15T00:00:00.000Z" })
      ),
      (running) =>
        Effect.promise(async () => {
          const { origin } = running
          for (const authorization of [undefined, `Basic ${btoa("v:user_bad")}`]) {
            const refused = await fetch(`${origin}/provider_a/CO/facilities/v2/`, {
              ...(authorization === undefined ? {} : { headers: { authorization } })
            })
            assert.strictEqual(refused.status, 401)
            assert.match(refused.headers.get("www-authenticate") ?? "", /^Basic realm="[^"]+"/)
          }
          // provider_a: Metrc's 404, not the 400 that asks for a licence
          for (const path of ["/provider_a/CO/nope", "/provider_a/CO/v2/packages/active"]) {
            const answer = await fetch(`${origin}${path}`, { headers: auth })
            assert.strictEqual(answer.status, 404, path)
            assert.deepStrictEqual(await answer.json(), {
              Message: "The requested resource could not be found (incorrect or invalid URI)."
            })
          }
          // provider_b: the web server's page (the action API answers at one path only)
          const b = await fetch(`${origin}/provider_b/HI/nope`, { method: "POST", body: "{}" })
          assert.strictEqual(b.status, 404)
          assert.strictEqual(b.headers.get("content-type"), "text/html")
          assert.include(await b.text(), "404")
          // a state no system serves, in the provider's mount
          const state = await fetch(`${origin}/provider_a/ZZ/facilities/v2/`, { headers: auth })
          assert.strictEqual(state.status, 404)
          assert.strictEqual(state.headers.get("content-type"), "application/json")
          assert.deepStrictEqual(await state.json(), { Message: "Unknown state ZZ" })
          // the sandbox's own paths answer in the control API's shape, {error: {code, message}}
          for (const path of ["/_sandbox/nope", "/nope", "/", "/provider_c/CO/x", "/provider_a"]) {
            const answer = await fetch(`${origin}${path}`)
            assert.strictEqual(answer.status, 404, path)
            assert.strictEqual(answer.headers.get("content-type"), "application/json", path)
            const body = await answer.json()
            assert.deepStrictEqual(Object.keys(body), ["error"], path)
            assert.strictEqual(body.error.code, "not_found", path)
            assert.isString(body.error.message, path)
          }
        }),
      (running) => Effect.promise(() => running.close())
    ))
})

describe("Standalone.help", () => {
  const text = Standalone.help()

  it("lists every flag with its default", () => {
    const flags: ReadonlyArray<readonly [string, string]> = [
      ["--port", String(Standalone.DEFAULTS.port)],
      ["--host", Standalone.DEFAULTS.host],
      ["--seed", Standalone.DEFAULTS.seed],
      ["--size", Standalone.DEFAULTS.size],
      ["--reference-date", "start of the current UTC day"],
      ["--requests-per-second", String(Standalone.DEFAULTS.requestsPerSecond)],
      ["--help", ""]
    ]
    for (const [flag, fallback] of flags) {
      const lines = text.split("\n")
      const at = lines.findIndex((l) => l.startsWith(`  ${flag} `) || l.startsWith(`  -h, ${flag} `))
      assert.isAtLeast(at, 0, `${flag} is listed`)
      // the flag's text, with the lines it wraps onto
      const rest = lines.slice(at + 1)
      const entry = [lines[at], ...rest.slice(0, rest.findIndex((l) => !/^ {6,}\S/.test(l)))].join(" ")
      assert.include(entry.replace(/\s+/g, " "), fallback, `${flag}'s default`)
    }
  })

  it("lists every installed provider: base URL per state, its states, how to authenticate, and its test logins", () => {
    const flat = text.replace(/\s+/g, " ")
    for (const provider of Registry.installed.providers) {
      const name = SandboxProvider.nameOf(provider)
      assert.include(text, `${name} (${provider.banner.style})`)
      assert.include(text, `http://127.0.0.1:4010/${name}/{STATE}`)
      assert.include(flat, ProviderDescriptor.states(provider.module.descriptor).join(", "))
      if (provider.banner.auth !== undefined) assert.include(flat, provider.banner.auth.replace(/\s+/g, " "))
      for (const login of [provider.logins.good, provider.logins.bad, provider.logins.locked]) {
        assert.include(text, Object.entries(login).map(([field, value]) => `${field}=${value}`).join(" "))
      }
    }
    // both providers say how a client authenticates; provider_a is Metrc's HTTP Basic: the vendor
    // key is the username and the user key the password
    assert.isString(Registry.get("provider_a").banner.auth)
    assert.isString(Registry.get("provider_b").banner.auth)
    assert.match(flat, /HTTP Basic.*username = vendor.*password = user API key/)
    assert.include(flat, "WWW-Authenticate")
  })

  it("lists every control route, the scenarios and the fault kinds", () => {
    for (const route of ControlApi.routes) {
      assert.match(text, new RegExp(`${route.method} +${route.path.replace(/[?{}]/g, "\\$&")}\n`))
    }
    assert.deepStrictEqual(
      ControlApi.routes.map((r) => `${r.method} ${r.path.split("?")[0]}`).filter((r, i, all) => all.indexOf(r) === i),
      [
        "GET /_sandbox/state",
        "POST /_sandbox/reset",
        "POST /_sandbox/seed",
        "POST /_sandbox/scenarios/{name}",
        "GET /_sandbox/faults",
        "PUT /_sandbox/faults",
        "DELETE /_sandbox/faults"
      ]
    )
    for (const name of Scenario.names) assert.include(text, name)
    for (const kind of ["outage", "slow", "rate_limited", "malformed", "expired_login"]) assert.include(text, kind)
  })
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

describe("the tracebridge-sandbox bin (bin/tracebridge-sandbox.mjs, loading the one bundled module)", () => {
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
