/**
 * A connection: one end user's linked provider account for one state (spec §2).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Capabilities } from "./Capabilities.js"
import { ConnectionId } from "./Ids.js"
import { ProviderName, UsState } from "./ProviderName.js"

/**
 * `pending` until the first facility sync succeeds (for a production connection, until the managed
 * sync's first backfill of every facility is done), `active` while it works, `error` when the
 * provider rejects the login, `inactive` once disconnected. Moves follow `Transitions.connectionStatus`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectionStatus = Schema.Literal("active", "inactive", "error", "pending").annotations({
  identifier: "ConnectionStatus",
  description: "pending until the first sync is done (production: the first backfill of every facility), " +
    "active while it works, error when the state system refuses the login (relink), inactive once disconnected"
})

/**
 * @since 0.1.0
 * @category models
 */
export type ConnectionStatus = typeof ConnectionStatus.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const Connection = Schema.Struct({
  id: ConnectionId,
  external_id: Schema.NullOr(Schema.String).annotations({
    description: "The integrator's own identifier, carried over from the link token request"
  }),
  provider: ProviderName,
  state: UsState,
  status: ConnectionStatus,
  is_sandbox: Schema.Boolean,
  capabilities: Capabilities
}).annotations({ identifier: "Connection", description: "A linked provider account of one end user for one state" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Connection extends Schema.Schema.Type<typeof Connection> {}
