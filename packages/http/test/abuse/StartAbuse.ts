/**
 * At start (issue #28): the built server refuses an encryption key that is not 32 random-looking
 * bytes, with a message naming the variable and how to make one, and never the key itself.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, main } from "../support/Process.js"
import type { Suite } from "./Harness.js"

/** Runs the built server with `env` until it exits (killed after `ms`): its exit code and output. */
const runUntilExit = (env: Readonly<Record<string, string>>, ms: number) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, [main], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    const timer = setTimeout(() => child.kill("SIGKILL"), ms)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })

export const suite: Suite = (backend) =>
  describe(`the server at start on ${backend}`, () => {
    it("an all-zero or patterned encryption key refuses to start, with a message and without the key", async () => {
      const weak = [Buffer.alloc(32), Buffer.from("0123456789abcdef".repeat(2), "latin1")]
      for (const key of weak) {
        const dataDir = mkdtempSync(join(tmpdir(), "tb-start-"))
        try {
          const encoded = key.toString("base64")
          const { code, output } = await runUntilExit({
            HOST: "127.0.0.1",
            PORT: String(await freePort()),
            TRACEBRIDGE_DATA_DIR: dataDir,
            DATABASE_URL: "",
            TRACEBRIDGE_ENCRYPTION_KEY: encoded
          }, 20_000)
          assert.isNotNull(code, `the server did not exit:\n${output}`)
          assert.notStrictEqual(code, 0, output)
          assert.include(output, "TRACEBRIDGE_ENCRYPTION_KEY: key 1 does not look random")
          assert.notInclude(output, encoded)
        } finally {
          rmSync(dataDir, { recursive: true, force: true })
        }
      }
    }, 60_000)
  })
