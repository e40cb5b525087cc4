// Child processes, ports and waiting. Every child spawned here is killed when the bench exits,
// fails or is interrupted.
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as net from "node:net"

const children = new Set()

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A free loopback port (bound then released). */
export const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

/** Polls `check` every `every` ms until it is truthy; throws after `ms`. */
export const until = async (what, check, ms = 20_000, every = 20) => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(every)
  }
}

/**
 * Spawns a child whose stdout and stderr are drained (a full pipe would stall it) and whose last
 * 64 KB of output are kept for error messages.
 */
export const start = (command, args, options = {}) => {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options })
  children.add(child)
  let output = ""
  const keep = (chunk) => {
    output += chunk.toString("utf8")
    if (output.length > 131_072) output = output.slice(-65_536)
  }
  child.stdout.on("data", keep)
  child.stderr.on("data", keep)
  const exited = new Promise((resolve) =>
    child.on("exit", (code, signal) => {
      children.delete(child)
      resolve(code ?? signal)
    })
  )
  return {
    child,
    pid: child.pid,
    exited,
    output: () => output,
    alive: () => child.exitCode === null && child.signalCode === null,
    /** SIGTERM, then SIGKILL after `graceMs`. */
    stop: async (graceMs = 2_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs)
      await exited
      clearTimeout(timer)
    }
  }
}

/** Resident set size of a process, in bytes (Linux /proc). */
export const rssOf = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)
  if (kb === null) throw new Error(`no VmRSS for pid ${pid}`)
  return Number(kb[1]) * 1024
}

export const killAll = () => {
  for (const child of children) {
    try {
      child.kill("SIGKILL")
    } catch {
      // already gone
    }
  }
  children.clear()
}

let installed = false
/** Kills every child on exit, on SIGINT/SIGTERM and on an uncaught error. */
export const installCleanup = () => {
  if (installed) return
  installed = true
  process.on("exit", killAll)
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => {
      killAll()
      process.exit(130)
    })
  }
  process.on("uncaughtException", (error) => {
    console.error(error)
    killAll()
    process.exit(1)
  })
  process.on("unhandledRejection", (error) => {
    console.error(error)
    killAll()
    process.exit(1)
  })
}
