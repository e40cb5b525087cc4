// The baseline of the production store read (bench row 12): a minimal Fastify server answering
// GET /v1/connections/:c/facilities/:f/packages?page=&per_page= from the same Postgres schema the
// Tracebridge server syncs into, with `pg` (a pool of 10, as @effect/sql-pg's default). Per
// request, like the API's store read: the connection's provider and state, the facility's sync
// state, the packages list's sync state, the count and the page's rows (`ORDER BY first_seq LIMIT
// OFFSET`), each a named (prepared) statement; the stored bodies spliced into the same JSON
// (`data`, then `meta` with the same members, then `pagination`). No authentication, rate limit
// or schema decoding.
//   node bench/lib/store-fastify-pg-server.mjs <port> <database url> <content-type>
import Fastify from "fastify"
import { randomBytes } from "node:crypto"
import pg from "pg"

const [port, url, contentType] = process.argv.slice(2)
const pool = new pg.Pool({ connectionString: url, max: 10 })

const q = (name, text, values) => pool.query({ name, text, values })
const iso = (ms) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString())

const app = Fastify({ logger: false })
app.get("/v1/connections/:c/facilities/:f/packages", async (request, reply) => {
  const { c, f } = request.params
  const page = request.query.page === undefined ? 1 : Number(request.query.page)
  const perPage = request.query.per_page === undefined ? 20 : Number(request.query.per_page)
  const [connection, facility, resource] = await Promise.all([
    q("connection", "SELECT provider, state FROM connections WHERE id = $1", [c]),
    q(
      "facility",
      "SELECT status, backfilled_through, last_synced_at FROM sync_facilities WHERE connection_id = $1 AND facility_id = $2",
      [c, f]
    ),
    q(
      "resource",
      "SELECT status FROM sync_resources WHERE connection_id = $1 AND facility_id = $2 AND resource = 'packages'",
      [c, f]
    )
  ])
  if (connection.rows.length === 0) return reply.code(404).send({ error: "no such connection" })
  const state = facility.rows[0]
  if (state === undefined || state.backfilled_through === null || resource.rows[0]?.status !== "live") {
    return reply.code(503).send({ error: "not synced" })
  }
  const [counted, rows] = await Promise.all([
    q(
      "count",
      "SELECT COUNT(*) AS n FROM sync_objects WHERE connection_id = $1 AND facility_id = $2 AND resource = 'packages' AND body IS NOT NULL",
      [c, f]
    ),
    q(
      "page",
      "SELECT body FROM sync_objects WHERE connection_id = $1 AND facility_id = $2 AND resource = 'packages' AND body IS NOT NULL ORDER BY first_seq LIMIT $3 OFFSET $4",
      [c, f, perPage, (page - 1) * perPage]
    )
  ])
  const total = Number(counted.rows[0].n)
  const meta = {
    request_id: `req_${randomBytes(12).toString("hex")}`,
    timestamp: new Date().toISOString(),
    provider: connection.rows[0].provider,
    state: connection.rows[0].state,
    sync: { status: state.status, last_synced_at: iso(state.last_synced_at) },
    skipped: []
  }
  const pagination = { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) }
  const data = rows.rows.map((r) => r.body).join(",")
  // bytes, so that Fastify sends the content type as given (it adds a charset to a string's)
  return reply.header("content-type", contentType).send(
    Buffer.from(`{"data":[${data}],"meta":${JSON.stringify(meta)},"pagination":${JSON.stringify(pagination)}}`, "utf8")
  )
})
await app.listen({ port: Number(port), host: "127.0.0.1" })
process.stdout.write("ready\n")
process.on("SIGTERM", () => app.close().then(() => pool.end()).then(() => process.exit(0)))
