// The row 6 baseline: the smallest useful node:http server (answers every request with 200 JSON).
//   node bench/lib/minimal-server.mjs <port>
import { createServer } from "node:http"

const port = Number(process.argv[2])
createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json" }).end("{\"ok\":true}")
}).listen(port, "127.0.0.1")
process.on("SIGTERM", () => process.exit(0))
