/**
 * Helpers of the tests that run the built server (`dist/main.js`) as a process.
 */
import type { AddressInfo } from "node:net"
import * as net from "node:net"
import { fileURLToPath } from "node:url"

/** The built server's entry point. */
export const main = fileURLToPath(new URL("../../dist/main.js", import.meta.url))

/** A port nothing listens on now. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `check` every 20 ms until it holds; the milliseconds it took, or an error after `ms`. */
export const until = async (what: string, check: () => boolean | Promise<boolean>, ms = 10_000) => {
  const started = Date.now()
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(20)
  }
  return Date.now() - started
}
