/**
 * The production webhook poller on several nodes (`WebhookPoller.runDue`): a connection due for a
 * poll is claimed in the database, so two nodes' passes at once poll it once, not once each (the
 * snapshot's compare-and-set kept the events single, but every upstream read was made twice).
 * Against the strict provider_a emulator as a production state system.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { WebhookStore } from "../src/persistence/WebhookStore.js"
import { WebhookPoller } from "../src/services/WebhookPoller.js"
import { againstStandalone, appAgainst, unpaced } from "./support/StandaloneUpstream.js"
import { awaitStatus, linkProduction, productionSignIn } from "./support/TestApp.js"

describe("WebhookPoller.runDue on several nodes", () => {
  it.live(
    "two passes at once (two nodes) poll a due connection once, and the next pass waits an interval",
    () =>
      againstStandalone(
        (running) => appAgainst(running, { TRACEBRIDGE_SYNC_HORIZON_DAYS: "1", ...unpaced }),
        (running) =>
          Effect.gen(function*() {
            const transfers: Array<string> = []
            running.server.on("request", (request: { url?: string }) => {
              if ((request.url ?? "").includes("/transfers/")) transfers.push(request.url ?? "")
            })
            const { access } = yield* productionSignIn
            const { connectionId } = yield* linkProduction(access)
            // the poller polls active connections: the first backfill done
            assert.strictEqual(yield* awaitStatus(access, connectionId, "active"), "active")

            const poller = yield* WebhookPoller
            const interval = Duration.minutes(15)
            const before = transfers.length
            const passes = yield* Effect.all([poller.runDue(interval), poller.runDue(interval)], {
              concurrency: "unbounded"
            })
            assert.strictEqual(passes[0] + passes[1], 1, `one of the two polled it: ${JSON.stringify(passes)}`)
            const read = transfers.length - before
            // the connection's sync is live: the baseline is the synced store's (issue #35), no
            // transfer list is read upstream for it
            assert.strictEqual(read, 0, "the baseline came from the synced store")
            assert.isTrue(
              (yield* (yield* WebhookStore).getPollSnapshot(connectionId))._tag === "Some",
              "its baseline is stored"
            )
            // within the interval, neither node polls it again
            assert.strictEqual(yield* poller.runDue(interval), 0)
            assert.strictEqual(transfers.length - before, read, "no read more")
          }),
        // pacing is not the subject: no limit upstream, none in the adapter
        { requestsPerSecond: 0 }
      ),
    120_000
  )
})
