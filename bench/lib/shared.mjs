// What several rows share within one run: the spawned read server (rows 1 and 7) and its
// packages path. Created on first use, stopped at the end of the run.
import { packagesPath, startApi } from "./api.mjs"

const cache = new Map()
const closers = []

const memo = (key, create) => {
  if (!cache.has(key)) cache.set(key, create())
  return cache.get(key)
}

/** The spawned server with a linked sandbox connection, and the per_page=100 packages path. */
export const readServer = () =>
  memo("read", async () => {
    const server = await startApi()
    closers.push(server.stop)
    const best = await packagesPath(server)
    return {
      server,
      path: best.path,
      count: best.count,
      body: best.answer.text,
      contentType: best.answer.headers.get("content-type")
    }
  })

export const closeShared = async () => {
  while (closers.length > 0) await closers.pop()().catch(() => undefined)
  cache.clear()
}
