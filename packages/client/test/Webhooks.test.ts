/**
 * Webhook signatures: real deliveries from the server (a subscription, a simulated scenario, a
 * rotated secret) verified by the SDK, and the SDK's signer checked against the server's own
 * (`signatureHeader` of packages/http/dist/services/WebhookDispatcher.js).
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  constructWebhookEvent,
  signWebhook,
  Tracebridge,
  verifyWebhookSignature,
  WebhookSignatureError
} from "../src/index.js"
import { linkSandbox, startServer, type TestServer } from "./support/Server.js"

let server: TestServer
let receiver: Server
let receiverUrl = ""
const deliveries: Array<{ headers: IncomingHttpHeaders; raw: Buffer }> = []

beforeAll(async () => {
  server = await startServer()
  receiver = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      deliveries.push({ headers: req.headers, raw: Buffer.concat(chunks) })
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/tracebridge`
})

afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve))
  await server?.stop()
})

const delivery = async (eventId: string) => {
  for (let i = 0; i < 200; i++) {
    const found = deliveries.find((d) => d.headers["x-tracebridge-event-id"] === eventId)
    if (found) return found
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no delivery of ${eventId}`)
}

const reason = (promise: Promise<unknown>) =>
  promise.then(() => "verified", (e: unknown) => (e instanceof WebhookSignatureError ? e.reason : String(e)))

describe.sequential("deliveries from the server", () => {
  let tb: Tracebridge
  let connectionId = ""
  let webhookId = ""
  let oldSecret = ""

  it("verifies a real delivery and refuses it tampered, under another secret, stale or unsigned", async () => {
    tb = new Tracebridge({ baseUrl: server.baseUrl, clientId: server.clientId, clientSecret: server.clientSecret })
    connectionId = (await linkSandbox(server, await tb.accessToken())).connection_id
    const created = await tb.post("/v1/webhooks", {
      body: { url: receiverUrl, events: ["transfer.arrived", "transfer.completed", "lab_result.received"] }
    })
    webhookId = created.data.id
    oldSecret = created.data.secret
    const simulated = await tb.post("/v1/sandbox/{connection_id}/simulate", {
      params: { path: { connection_id: connectionId } },
      body: { scenario: "transfer_arrived" }
    })
    expect(simulated.data.deliveries).toBe(1)
    const { headers, raw } = await delivery(simulated.data.event!.id)
    const signature = headers["x-tracebridge-signature"] as string
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)

    const event = await constructWebhookEvent(raw.toString("utf8"), signature, oldSecret)
    expect(event).toEqual(simulated.data.event)
    expect(event.type).toBe("transfer.arrived")
    if (event.type === "transfer.arrived") expect(event.data.connection_id).toBe(connectionId)
    // Bytes as received work as well as the string.
    expect(await constructWebhookEvent(new Uint8Array(raw), signature, [oldSecret])).toEqual(event)

    const tampered = raw.toString("utf8").replace(connectionId, "conn_someone_else")
    expect(await reason(verifyWebhookSignature(tampered, signature, oldSecret))).toBe("no_matching_signature")
    expect(await reason(verifyWebhookSignature(raw, signature, "whsec_not_this_one"))).toBe("no_matching_signature")
    const t = Number(/^t=(\d+)/.exec(signature)![1])
    const later = { now: () => (t + 301) * 1000 }
    expect(await reason(verifyWebhookSignature(raw, signature, oldSecret, later))).toBe("stale_timestamp")
    const justInTime = { now: () => (t + 300) * 1000 }
    expect(await reason(verifyWebhookSignature(raw, signature, oldSecret, justInTime))).toBe("verified")
    expect(await reason(verifyWebhookSignature(raw, undefined, oldSecret))).toBe("missing_header")
    expect(await reason(verifyWebhookSignature(raw, "sha256=abc", oldSecret))).toBe("malformed_header")
  })

  it("verifies a delivery signed with both secrets during a rotation, with either secret", async () => {
    const rotated = await tb.post("/v1/webhooks/{webhook_id}/rotate_secret", {
      params: { path: { webhook_id: webhookId } }
    })
    const newSecret = rotated.data.secret
    expect(newSecret).toMatch(/^whsec_/)
    expect(newSecret).not.toBe(oldSecret)
    const simulated = await tb.post("/v1/sandbox/{connection_id}/simulate", {
      params: { path: { connection_id: connectionId } },
      body: { scenario: "transfer_completed", params: { outcome: "received" } }
    })
    const { headers, raw } = await delivery(simulated.data.event!.id)
    const signature = headers["x-tracebridge-signature"] as string
    expect(signature.match(/v1=/g)).toHaveLength(2)
    expect(await reason(verifyWebhookSignature(raw, signature, newSecret))).toBe("verified")
    expect(await reason(verifyWebhookSignature(raw, signature, oldSecret))).toBe("verified")
    expect(await reason(verifyWebhookSignature(raw, signature, "whsec_neither"))).toBe("no_matching_signature")
    const event = await constructWebhookEvent(raw, signature, [newSecret, oldSecret])
    expect(event.type).toBe("transfer.completed")
  })
})

describe("the SDK's signer and the server's", () => {
  it("make the same header for the same secrets, time and body", async () => {
    const dispatcherPath = new URL("../../http/dist/services/WebhookDispatcher.js", import.meta.url).href
    const dispatcher: {
      readonly signatureHeader: (secrets: ReadonlyArray<string>, timestamp: number, body: string) => string
    } = await import(/* @vite-ignore */ dispatcherPath)
    const bodies = ["{}", JSON.stringify({ id: "evt_1", type: "lab_result.received", data: { note: "THC 21 % · ✓" } })]
    for (const body of bodies) {
      for (const secrets of [["whsec_a"], ["whsec_a", "whsec_b"]]) {
        const theirs = dispatcher.signatureHeader(secrets, 1_790_000_000, body)
        expect(await signWebhook(body, secrets, 1_790_000_000)).toBe(theirs)
        const now = () => 1_790_000_000_000
        expect(await reason(verifyWebhookSignature(body, theirs, secrets.at(-1)!, { now }))).toBe("verified")
      }
    }
  })
})
