/**
 * The operator CLI, as an operator runs it (the built `dist/cli.js`), against a fresh data folder.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url))

describe("Cli", () => {
  it("creates an organisation and a client, switches the plan and lists", () => {
    const env = { ...process.env, TRACEBRIDGE_DATA_DIR: mkdtempSync(join(tmpdir(), "tb-cli-")), DATABASE_URL: "" }
    const run = (...args: Array<string>) => spawnSync(process.execPath, [cli, ...args], { env, encoding: "utf8" })
    const org = run("create-org", "Acme Retail")
    assert.strictEqual(org.status, 0, org.stderr)
    const [id, name, plan] = org.stdout.trim().split("\t")
    assert.match(id!, /^org_/)
    assert.deepStrictEqual([name, plan], ["Acme Retail", "sandbox"])
    const client = run("create-client", id!)
    assert.match(client.stdout, /client_id=tb_client_/)
    assert.match(client.stdout, /client_secret=tb_secret_/)
    assert.strictEqual(run("set-plan", id!, "production").status, 0)
    assert.include(run("list-orgs").stdout, `${id}\tAcme Retail\tproduction`)
    assert.strictEqual(run("list-connections", id!).stdout, "")
    const bad = run("set-plan", id!, "platinum")
    assert.strictEqual(bad.status, 2)
    assert.include(bad.stderr, "usage")
    assert.strictEqual(run("create-client", "org_missing").status, 2)
  })
})
