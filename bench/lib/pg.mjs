// Postgres for the bench's Postgres rows: the database named by BENCH_DATABASE_URL or
// TEST_DATABASE_URL, else a throwaway cluster this process starts itself (Debian's binaries under
// /usr/lib/postgresql/*/bin: initdb and pg_ctl in a temporary folder, run as the `postgres` user
// when the bench runs as root). Each server gets a fresh schema of its own (a URL whose connections
// see only it), dropped at the end of the run.
import { execFileSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { freePort } from "./proc.mjs"

const closers = []

/** The newest installed Debian Postgres's bin folder, or undefined. */
const binaries = () => {
  const base = "/usr/lib/postgresql"
  if (!existsSync(base)) return undefined
  const versions = readdirSync(base).filter((v) => existsSync(join(base, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a))
  return versions.length === 0 ? undefined : join(base, versions[0], "bin")
}

/** Runs a Postgres binary, as the `postgres` user when this process is root (initdb refuses root). */
const run = (bin, args) => {
  const asRoot = process.getuid?.() === 0
  const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args]
  return execFileSync(file, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
}

/** Starts a throwaway cluster on a free loopback port; stopped and removed by `closePg`. */
const throwaway = async () => {
  const bin = binaries()
  if (bin === undefined) {
    return {
      skip:
        "Postgres is not installed (no /usr/lib/postgresql/*/bin/initdb) and neither BENCH_DATABASE_URL nor TEST_DATABASE_URL is set"
    }
  }
  const dir = mkdtempSync(join(tmpdir(), "tb-bench-pg-"))
  chmodSync(dir, 0o777)
  const data = join(dir, "data")
  const port = await freePort()
  if (process.getuid?.() === 0) execFileSync("chown", ["postgres", dir])
  run(join(bin, "initdb"), ["-D", data, "-U", "bench", "--auth=trust", "-E", "UTF8", "--no-sync"])
  run(join(bin, "pg_ctl"), [
    "-D",
    data,
    "-l",
    join(dir, "log"),
    "-w",
    "-o",
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=200`,
    "start"
  ])
  closers.push(() => {
    try {
      run(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
  return {
    url: `postgres://bench@127.0.0.1:${port}/postgres`,
    source: `a throwaway Postgres (${bin}, initdb in a temporary folder)`
  }
}

let database
/**
 * The database for this run: `{ url, source }`, or `{ skip }` with the reason the Postgres rows
 * cannot run.
 */
export const pgDatabase = () => {
  database ??= (async () => {
    const given = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL
    if (given) {
      return { url: given, source: process.env.BENCH_DATABASE_URL ? "BENCH_DATABASE_URL" : "TEST_DATABASE_URL" }
    }
    try {
      return await throwaway()
    } catch (error) {
      return {
        skip: `a throwaway Postgres did not start: ${String(error?.stderr ?? error?.message ?? error).split("\n")[0]}`
      }
    }
  })()
  return database
}

/** A fresh schema in `url`: the URL of connections that see only it; dropped by `closePg`. */
export const freshSchema = async (url, prefix = "tb_bench") => {
  const schema = `${prefix}_${randomUUID().replaceAll("-", "")}`
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`CREATE SCHEMA ${schema}`)
  } finally {
    await client.end()
  }
  closers.unshift(async () => {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      await c.query(`DROP SCHEMA ${schema} CASCADE`)
    } finally {
      await c.end()
    }
  })
  const scoped = new URL(url)
  scoped.searchParams.set("options", `-c search_path=${schema}`)
  return { url: scoped.href, schema }
}

/** Drops the schemas and stops a throwaway cluster. */
export const closePg = async () => {
  while (closers.length > 0) {
    try {
      await closers.shift()()
    } catch {
      // best effort: the next closer still runs
    }
  }
  database = undefined
}
