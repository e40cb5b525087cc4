/**
 * The provider_a (Metrc-style) emulator. Placeholder until it is built.
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
): Promise<Response> => new Response(null, { status: 501 })
