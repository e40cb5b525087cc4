/**
 * What the guides in `docs/guides/` show is what the service does: the webhooks guide's plain-Node
 * verifier, taken from the guide as written, accepts what Tracebridge signs and refuses the rest.
 * (The getting-started session runs in ReadmeSession.test.ts; the page in Docs.test.ts.)
 */
import { assert, describe, it } from "@effect/vitest"
import { WebhookSignature } from "@tracebridge/core"
import { Effect } from "effect"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const guide = readFileSync(fileURLToPath(new URL("../../../docs/guides/webhooks.md", import.meta.url)), "utf8")

type Verify = (raw: string, header: string | undefined, secrets: Array<string>, toleranceSeconds?: number) => boolean

describe("guides", () => {
  it.effect("the webhooks guide's plain-Node verifier accepts Tracebridge's signatures and refuses the rest", () =>
    Effect.gen(function*() {
      const blocks = [...guide.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!)
      const snippet = blocks.find((b) => b.includes("createHmac"))
      assert.isDefined(snippet, "the guide has a verifier without the package")
      const file = join(mkdtempSync(join(tmpdir(), "tb-guide-")), "verify.mjs")
      writeFileSync(file, snippet!)
      const { verify } = (yield* Effect.promise(() => import(pathToFileURL(file).href))) as { verify: Verify }

      const secret = "whsec_guide_test_0123456789"
      const old = "whsec_guide_old_9876543210"
      const body = JSON.stringify({ id: "evt_1", type: "lab_result.received", data: { passed: false } })
      const now = Math.floor(Date.now() / 1000)
      const header = yield* WebhookSignature.sign([secret], now, body)
      assert.isTrue(verify(body, header, [secret]))
      // during a rotation: one v1= per live secret, either secret verifies
      const rotating = yield* WebhookSignature.sign([secret, old], now, body)
      assert.isTrue(verify(body, rotating, [old]))
      assert.isTrue(verify(body, rotating, ["whsec_other", secret]))
      // refused: another body, another secret, a stale or missing timestamp, no header
      assert.isFalse(verify(body + " ", header, [secret]))
      assert.isFalse(verify(body, header, ["whsec_other"]))
      assert.isFalse(verify(body, yield* WebhookSignature.sign([secret], now - 301, body), [secret]))
      assert.isFalse(verify(body, header.replace(/^t=\d+,/, ""), [secret]))
      assert.isFalse(verify(body, undefined, [secret]))
      // the package's verifier agrees on the same header
      const event = yield* Effect.promise(() =>
        WebhookSignature.verifyWebhook(body, header, [secret], { toleranceSeconds: 300 })
      )
      assert.strictEqual((event as { id: string }).id, "evt_1")
    }))
})
