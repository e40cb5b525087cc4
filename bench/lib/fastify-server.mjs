// The row 1 baseline: a minimal Fastify server answering every GET with the exact bytes and
// content type Tracebridge gave (read from files named on the command line).
//   node bench/lib/fastify-server.mjs <port> <body-file> <content-type>
import Fastify from "fastify"
import { readFileSync } from "node:fs"

const [port, bodyFile, contentType] = process.argv.slice(2)
const body = readFileSync(bodyFile)
const app = Fastify({ logger: false })
app.get("/*", (_request, reply) => {
  reply.header("content-type", contentType).send(body)
})
await app.listen({ port: Number(port), host: "127.0.0.1" })
process.stdout.write("ready\n")
process.on("SIGTERM", () => app.close().then(() => process.exit(0)))
