/**
 * The provider_b (BioTrack-style) emulator. Placeholder until it is built.
 *
 * @since 0.1.0
 */
import type { ProviderName } from "@tracebridge/core"
import type { Sandbox } from "./Sandbox.js"

/**
 * @since 0.1.0
 * @category handlers
 */
export const handle = async (
  _sandbox: Sandbox,
  _state: ProviderName.UsState,
  _path: string,
  _request: Request
): Promise<Response> =>
  new Response(JSON.stringify({ success: 0, error: "provider_b emulator not built yet" }), {
    status: 200,
    headers: { "content-type": "application/json" }
  })
