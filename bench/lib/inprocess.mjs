// The real provider_a adapter against the in-process sandbox emulator (no sockets), as the
// sandbox tests and the /v1 service wire it, over a sandbox of a chosen size.
import { ProviderA, ProviderAConfig } from "@tracebridge/adapter-provider-a"
import { ProviderPort, Session } from "@tracebridge/core"
import { Registry, Sandbox, SandboxServer } from "@tracebridge/sandbox"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"

const DAY = 86_400_000

/** A sandbox whose worlds have `packages` packages, with the adapter port over it. */
export const makeInProcess = ({ packages }) => {
  const now = () => Date.now()
  const sandbox = new Sandbox.Sandbox({
    providers: Registry.installed,
    seed: "42",
    referenceDate: new Date(Math.floor(now() / DAY) * DAY).toISOString(),
    now,
    size: { packages }
  })
  // The settings the /v1 service gives its sandbox ports (services/Providers.ts).
  const layer = ProviderA.layer.pipe(
    Layer.provide(ProviderAConfig.layer({
      vendorKey: Redacted.make("tracebridge-sandbox"),
      retryBaseDelay: 0,
      perFacility: { requestsPerSecond: 1_000_000, concurrency: 64 },
      perVendorKey: { requestsPerSecond: 1_000_000, concurrency: 256 }
    })),
    Layer.provide(SandboxServer.layerHttpClient(SandboxServer.makeHandler(sandbox)))
  )
  const runtime = ManagedRuntime.make(layer)
  const session = Session.make({
    key: "sandbox:user_good",
    provider: "provider_a",
    state: "CO",
    environment: "sandbox",
    credentials: { user_key: "user_good" },
    baseUrl: SandboxServer.baseUrl(SandboxServer.IN_PROCESS_ORIGIN, "provider_a", "CO")
  })
  const world = () => sandbox.world("provider_a", "CO", "user_good")
  const run = (f) => runtime.runPromise(Effect.flatMap(ProviderPort.ProviderPort, f))
  return { sandbox, world, session, run, handler: SandboxServer.makeHandler(sandbox), dispose: () => runtime.dispose() }
}
