/**
 * The README's "A first session with curl", and the getting-started guide's session, run as
 * written (bash, curl and python3) against the built server (`dist/main.js`) as `npm start` runs it.
 * The only change made to the text is the port in its `API=` line. Every `curl` is recorded (its
 * arguments, status and body), and the answers are checked against what the text says of them: a
 * README whose paths, fields or documented statuses drift from the service fails here.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChildProcess } from "node:child_process"
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { freePort, main, until } from "./support/Process.js"

const root = fileURLToPath(new URL("../../../", import.meta.url))

/** The `sh` code blocks of a Markdown text, from `heading` to the next heading of its level or above. */
const shBlocks = (markdown: string, heading?: string): Array<string> => {
  let text = markdown
  if (heading !== undefined) {
    const lines = markdown.split("\n")
    const start = lines.indexOf(heading)
    assert.isAtLeast(start, 0, `the heading ${heading}`)
    const level = heading.split(" ")[0]!.length
    let end = start + 1
    for (let fenced = false; end < lines.length; end++) {
      if (lines[end]!.startsWith("```")) fenced = !fenced
      else if (!fenced && new RegExp(`^#{1,${level}} `).test(lines[end]!)) break
    }
    text = lines.slice(start + 1, end).join("\n")
  }
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)
}

/** The one `API=` line the sessions start with: `npm start`'s address. */
const API_LINE = "API=http://127.0.0.1:4000"

/** Every `curl` records its arguments, the response's headers and its body, in order. */
const preamble = (dir: string) =>
  `set -euo pipefail
echo 0 > "${dir}/n"
curl() {
  local n=$(( $(cat "${dir}/n") + 1 ))
  echo "$n" > "${dir}/n"
  printf '%s\\n' "$@" > "${dir}/args$n"
  command curl --dump-header "${dir}/headers$n" "$@" | tee "${dir}/body$n"
}
`

interface Call {
  readonly method: string
  readonly url: URL
  readonly status: number
  readonly body: any
}

const run = (script: string, api: string, env: Record<string, string>): Array<Call> => {
  assert.strictEqual(script.split(API_LINE).length, 2, `the session sets ${API_LINE} once`)
  const dir = mkdtempSync(join(tmpdir(), "tb-readme-"))
  const file = join(dir, "session.sh")
  writeFileSync(file, preamble(dir) + script.replace(API_LINE, `API=${api}`))
  const result = spawnSync("bash", [file], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60_000 })
  assert.strictEqual(result.status, 0, `the session failed:\n${result.stderr}\n${result.stdout}`)
  const count = Number(readFileSync(join(dir, "n"), "utf8"))
  assert.strictEqual(readdirSync(dir).filter((f) => f.startsWith("body")).length, count)
  return Array.from({ length: count }, (_, i) => {
    const args = readFileSync(join(dir, `args${i + 1}`), "utf8").split("\n")
    const headers = readFileSync(join(dir, `headers${i + 1}`), "utf8")
    const explicit = args.indexOf("-X")
    return {
      method: explicit >= 0 ? args[explicit + 1]! : args.includes("-d") ? "POST" : "GET",
      url: new URL(args.find((a) => a.startsWith("http"))!),
      status: Number(headers.split(" ")[1]),
      body: JSON.parse(readFileSync(join(dir, `body${i + 1}`), "utf8"))
    }
  })
}

/** Checks a session's calls against what the README and the guide say they answer. */
const check = (calls: ReadonlyArray<Call>, script: string, documentedSplitStatus: number) => {
  assert.strictEqual(calls.length, script.match(/\bcurl /g)!.length, "every curl of the session ran")
  const find = (method: string, path: RegExp) => {
    const found = calls.filter((c) => c.method === method && path.test(c.url.pathname))
    assert.isNotEmpty(found, `${method} ${path}`)
    return found
  }
  // 1. an access token
  const [token] = find("POST", /^\/v1\/oauth\/token$/)
  assert.strictEqual(token!.status, 200)
  assert.match(token!.body.access_token, /^tb_at_/)
  assert.match(token!.body.refresh_token, /^tb_rt_/)
  assert.strictEqual(token!.body.expires_in, 3600)
  // 2. a link token
  const [link] = find("POST", /^\/v1\/link\/token\/create$/)
  assert.strictEqual(link!.status, 200)
  assert.match(link!.body.data.link_token, /^link-sandbox-/)
  // 3. a sandbox public token
  const [created] = find("POST", /^\/v1\/sandbox\/public_token\/create$/)
  assert.strictEqual(created!.status, 200)
  assert.match(created!.body.data.public_token, /^public-sandbox-/)
  // 4. the exchange: a connection, and (the first time) a connection token
  const [exchanged] = find("POST", /^\/v1\/link\/token\/exchange$/)
  assert.strictEqual(exchanged!.status, 200)
  assert.match(exchanged!.body.data.connection_id, /^conn_/)
  assert.match(exchanged!.body.data.connection_token, /^tb_ct_/)
  assert.strictEqual(exchanged!.body.data.status, "active")
  const connection = exchanged!.body.data.connection_id as string
  // 5. facilities, then a page of two packages
  const [facilities] = find("GET", new RegExp(`^/v1/connections/${connection}/facilities$`))
  assert.strictEqual(facilities!.status, 200)
  const facility = facilities!.body.data[0].id as string
  const lists = find("GET", new RegExp(`^/v1/connections/${connection}/facilities/${facility}/packages$`))
  const two = lists.find((c) => c.url.searchParams.get("per_page") === "2")!
  assert.strictEqual(two.status, 200)
  assert.lengthOf(two.body.data, 2)
  assert.strictEqual(two.body.pagination.per_page, 2)
  assert.strictEqual(two.body.pagination.page, 1)
  assert.deepStrictEqual(two.body.meta.skipped, [])
  // 6. a split of 5 off a package not on hold: the documented status, the new package
  const source = lists.find((c) => c.url.searchParams.get("is_on_hold") === "false")!
  assert.strictEqual(source.status, 200)
  assert.isFalse(source.body.data[0].is_on_hold)
  const [split] = find("POST", new RegExp(`^/v1/connections/${connection}/facilities/${facility}/packages$`))
  assert.strictEqual(split!.status, documentedSplitStatus)
  assert.strictEqual(split!.body.data.quantity, 5)
  assert.deepStrictEqual(split!.body.data.source_package_ids, [source.body.data[0].id])
  assert.strictEqual(split!.body.data.item_name, source.body.data[0].item_name)
  assert.notStrictEqual(split!.body.data.id, source.body.data[0].id)
}

describe("README", () => {
  it("'A first session with curl' and the getting-started guide answer as they say, on the built server", async () => {
    const port = await freePort()
    const clientId = "tb_client_readme_session"
    const clientSecret = "readme-session-secret-5b1e0c7d9a"
    const child: ChildProcess = spawn(process.execPath, [main], {
      env: {
        ...process.env,
        DATABASE_URL: "",
        HOST: "127.0.0.1",
        PORT: String(port),
        TRACEBRIDGE_DATA_DIR: mkdtempSync(join(tmpdir(), "tb-readme-data-")),
        TRACEBRIDGE_CLIENT_ID: clientId,
        TRACEBRIDGE_CLIENT_SECRET: clientSecret
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    const api = `http://127.0.0.1:${port}`
    try {
      await until("the server to answer", async () => {
        if (child.exitCode !== null) throw new Error(`the server exited early:\n${output}`)
        return fetch(`${api}/healthz`).then((r) => r.ok, () => false)
      }, 20_000)
      const env = { TRACEBRIDGE_CLIENT_ID: clientId, TRACEBRIDGE_CLIENT_SECRET: clientSecret }

      const readme = readFileSync(join(root, "README.md"), "utf8")
      const [session, ...others] = shBlocks(readme, "### A first session with curl")
      assert.isDefined(session)
      assert.lengthOf(others, 0)
      // the README's own words for the split's answer: "… into a new package (201)"
      const documented = /# 6\..*\((\d{3})\)/.exec(session!)
      assert.isNotNull(documented, "step 6 names its status")
      check(run(session!, api, env), session!, Number(documented![1]))

      const guide = shBlocks(readFileSync(join(root, "docs/guides/getting-started.md"), "utf8")).join("\n")
      const guideStatus = /answers \*\*(\d{3})\*\*/.exec(
        readFileSync(join(root, "docs/guides/getting-started.md"), "utf8")
      )
      assert.isNotNull(guideStatus, "the guide names the split's status")
      check(run(guide, api, env), guide, Number(guideStatus![1]))
    } finally {
      child.kill("SIGTERM")
      await until("the server to exit", () => child.exitCode !== null || child.signalCode !== null, 15_000)
    }
  }, 120_000)
})
