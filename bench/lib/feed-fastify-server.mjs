// Row 9's baseline: a minimal Fastify server answering the change feed
// (GET /v1/connections/:c/facilities/:f/changes?cursor=&limit=) from the same SQLite file the
// Tracebridge server writes, opened on a connection of its own with `PRAGMA query_only` (libsql
// 0.4 has no read-only open). Per request, like the API's handler: the connection's provider and
// state, the facility's sync state, and the feed rows (`limit + 1`, to tell `has_more`), each a
// statement prepared once; the stored bodies spliced into the same JSON (`data` of
// `{id:"chg_<seq>",type,action,object_id,object,changed_at}`, `meta` with the same members and the
// same cursor: signed with HMAC-SHA256 under the key the API derives from its encryption key,
// `TRACEBRIDGE_ENCRYPTION_KEY`, by the sync package's own `Cursor`). No authentication, rate limit
// or schema decoding.
//   node bench/lib/feed-fastify-server.mjs <port> <database file> <content-type>
import { Cursor } from "@tracebridge/sync"
import Fastify from "fastify"
import Database from "libsql"
import { hkdfSync, randomBytes } from "node:crypto"

const [port, file, contentType] = process.argv.slice(2)
const db = new Database(file)
db.exec("PRAGMA query_only = ON")
const connectionRow = db.prepare("SELECT organisation_id, provider, state FROM connections WHERE id = ?")
const keys = [
  Buffer.from(hkdfSync(
    "sha256",
    Buffer.from(process.env.TRACEBRIDGE_ENCRYPTION_KEY ?? "", "base64"),
    Buffer.alloc(0),
    Buffer.from(Cursor.KEY_LABEL, "utf8"),
    32
  ))
]
const facilityRow = db.prepare(
  "SELECT status, backfilled_through, last_synced_at FROM sync_facilities WHERE connection_id = ? AND facility_id = ?"
)
const feed = db.prepare(
  "SELECT seq, resource, object_id, body, changed_at FROM sync_objects " +
    "WHERE connection_id = ? AND facility_id = ? AND seq > ? ORDER BY seq LIMIT ?"
)

const iso = (ms) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString())
const app = Fastify({ logger: false })
app.get("/v1/connections/:c/facilities/:f/changes", (request, reply) => {
  const { c, f } = request.params
  const limit = request.query.limit === undefined ? 100 : Number(request.query.limit)
  const connection = connectionRow.get(c)
  if (connection === undefined) return reply.code(404).send({ error: "no such connection" })
  const binding = { organisation_id: connection.organisation_id, connection_id: c, facility_id: f }
  let after = 0
  if (request.query.cursor !== undefined) {
    const decoded = Cursor.decode(keys, request.query.cursor, binding, Date.now())
    if (decoded._tag === "Left") return reply.code(400).send({ error: "invalid cursor" })
    after = decoded.right.seq
  }
  const state = facilityRow.get(c, f)
  const rows = feed.all(c, f, after, limit + 1)
  const page = rows.slice(0, limit)
  const now = Date.now()
  const last = page.length === 0 ? after : Number(page[page.length - 1].seq)
  const meta = {
    request_id: `req_${randomBytes(12).toString("hex")}`,
    timestamp: new Date(now).toISOString(),
    provider: connection.provider,
    state: connection.state,
    next_cursor: Cursor.encode(keys, binding, { seq: last, issued_at: now }),
    has_more: rows.length > limit,
    sync: state === undefined
      ? { status: "backfilling", backfilled_through: null, last_synced_at: null }
      : {
        status: state.status,
        backfilled_through: iso(state.backfilled_through),
        last_synced_at: iso(state.last_synced_at)
      }
  }
  const data = page.map((r) =>
    `{"id":"chg_${r.seq}","type":${JSON.stringify(r.resource)},"action":"${
      r.body === null ? "removed" : "upserted"
    }","object_id":${JSON.stringify(r.object_id)},"object":${r.body ?? "null"},"changed_at":"${iso(r.changed_at)}"}`
  )
  // bytes, so that Fastify sends the content type as given (it adds a charset to a string's)
  reply.header("content-type", contentType).send(
    Buffer.from(`{"data":[${data.join(",")}],"meta":${JSON.stringify(meta)}}`, "utf8")
  )
})
await app.listen({ port: Number(port), host: "127.0.0.1" })
process.stdout.write("ready\n")
process.on("SIGTERM", () => app.close().then(() => process.exit(0)))
