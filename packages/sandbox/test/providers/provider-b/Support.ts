/**
 * The provider_b emulator as the adapter's one fake: a sandbox served over msw at a host of its
 * own (`../../support/Upstream.ts`), the adapter's session for it, and what BioTrack-style tests
 * need besides: the actions the adapter sent, one-shot answers picked by `action`, answers that
 * hang until the caller gives up, and emulator answers edited before they reach the adapter (a
 * deleted row, a seized lot), all in BioTrack's own JSON.
 */
import type { ProviderName, Resource } from "@tracebridge/core"
import { Session } from "@tracebridge/core"
import type { World } from "@tracebridge/sandbox"
import { Registry, Sandbox, SandboxServer } from "@tracebridge/sandbox"
import { Either } from "effect"
import * as Emulator from "../../../src/providers/provider-b/Emulator.js"
import * as Rows from "../../../src/providers/provider-b/rows.js"
import * as Upstream from "../../support/Upstream.js"

export const REFERENCE = "2026-03-15T12:00:00.000Z"
export const NOW = Date.parse(REFERENCE) + 60_000
/** The world the documented good login opens. */
export const LOGIN = "000000000:user_good"
export const { bad, good, locked } = Registry.get("provider_b").logins

type Json = Record<string, unknown>

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** Picks the requests of one BioTrack action (for `failNext`'s `match`). */
export const onAction = (action: string): Upstream.Match => (_request, body) =>
  isObject(body) && body["action"] === action

/** An answer with a JSON body (BioTrack answers everything with HTTP 200). */
export const json = (body: unknown, status = 200): Response =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } })

/** An answer that never comes: it waits until the client gives up (aborts) the request. */
export const hang = (request: Request): Promise<Response> =>
  new Promise<Response>((resolve) => {
    request.signal.addEventListener("abort", () => resolve(Response.error()))
  })

/** The rows of a table as BioTrack answers it: an array, or an object keyed by row number. */
export const rowsOf = (table: unknown): Array<Json> =>
  Array.isArray(table) ? table : isObject(table) ? (Object.values(table) as Array<Json>) : []

/** A provider_b upstream: a sandbox, its host, its clock, its world and sessions for it. */
export interface B {
  readonly sandbox: Sandbox.Sandbox
  readonly upstream: Upstream.Upstream
  readonly state: ProviderName.UsState
  /** The sandbox's clock (epoch ms): the emulator's sessions expire by it. */
  readonly clock: { now: number }
  /** The world the good login opens. */
  readonly world: World.World
  /** The facility data of the first facility of a role. */
  readonly facility: (role: World.Role) => World.FacilityData
  /** A sandbox session at this upstream (its own adapter session per key). */
  readonly session: (key: string, credentials?: Readonly<Record<string, string>>) => Session.Session
  /** The action of every request received, in order. */
  readonly actions: () => Array<string>
  /** The JSON body of every request received, in order. */
  readonly bodies: () => Array<Json>
  /**
   * The next request of `action` gets the emulator's answer, edited by `edit`; answers whether
   * that request came yet.
   */
  readonly editNext: (action: string, edit: (answer: Json) => Json) => () => boolean
  /** Applies a scenario to the world, now (or at `at`). */
  readonly scenario: (name: string, params: Record<string, unknown>, at?: number) => void
}

/**
 * A fresh sandbox behind a fresh upstream host. As BioTrack does in the recordings (and as the
 * hand-written fake this replaces always did), the emulator answers `inventory` keyed by row
 * number unless told otherwise.
 */
export const make = (
  options: { readonly state?: ProviderName.UsState; readonly emulator?: Partial<Emulator.Options> } = {}
): B => {
  const state = options.state ?? "AR"
  const clock = { now: NOW }
  const sandbox = new Sandbox.Sandbox({
    providers: Registry.installed,
    seed: "42",
    referenceDate: REFERENCE,
    now: () => clock.now
  })
  Emulator.configure(sandbox, { keyedTables: ["inventory"], ...options.emulator })
  const upstream = Upstream.make(sandbox)
  const world = sandbox.world("provider_b", state, LOGIN)
  const emulator = SandboxServer.makeHandler(sandbox)
  const bodies = () => upstream.bodies.filter(isObject)
  return {
    sandbox,
    upstream,
    state,
    clock,
    world,
    facility: (role) => {
      const found = world.facilities.find((d) => d.role === role)
      if (found === undefined) throw new Error(`the ${state} world has no ${role} facility`)
      return found
    },
    session: (key, credentials = good) =>
      Session.make({
        key,
        provider: "provider_b",
        state,
        environment: "sandbox",
        credentials,
        baseUrl: upstream.baseUrl("provider_b", state)
      }),
    actions: () => bodies().map((b) => String(b["action"])),
    bodies,
    editNext: (action, edit) => {
      let used = false
      upstream.failNext(async (request) => {
        used = true
        const answer = await emulator(request)
        return json(edit((await answer.json()) as Json), answer.status)
      }, { match: onAction(action) })
      return () => used
    },
    scenario: (name, params, at = clock.now) => {
      const applied = sandbox.apply(world, {
        _tag: "Scenario",
        input: { name, params, at }
      })
      if (Either.isLeft(applied)) throw new Error(`${name}: ${JSON.stringify(applied.left)}`)
    }
  }
}

/**
 * BioTrack's change marker of an object (epoch ms): the newest `sessiontime` of the live rows of
 * the facility's licence behind it, in the sync tables the emulator serves now; `null` when its
 * rows carry none, `undefined` when it has no rows.
 */
export const changedAt = (b: B) => (resource: Resource.Name, item: any): number | null | undefined => {
  const license = b.world.facilities.find((d) => d.facility.id === item.facility_id)?.facility.license_number
  if (license === undefined) return undefined
  const read = Rows.tablesOf(b.world, LOGIN.split(":")[0]!, [], new Map())
  const tables: Record<string, ReadonlyArray<Record<string, any>>> = Object.assign(
    {},
    ...Object.values(read).map((tablesOfAction) => tablesOfAction())
  )
  const rows = (table: string, match: (row: Record<string, any>) => boolean) =>
    (tables[table] ?? []).filter((r) => String(r["deleted"]) !== "1" && match(r))
  const here = (r: Record<string, any>) => r["location"] === license
  const newest = (found: ReadonlyArray<Record<string, any>>) => {
    const times = found.map((r) => r["sessiontime"]).filter((t) => t !== undefined && t !== null).map(Number)
    return found.length === 0 ? undefined : times.length === 0 ? null : Math.max(...times) * 1000
  }
  switch (resource) {
    case "packages":
      return newest(rows("inventory", (r) => here(r) && r["id"] === item.provider_package_id))
    case "plants":
      return newest(rows("plant", (r) => here(r) && r["id"] === item.provider_plant_id))
    case "harvests":
      return newest(rows("plant_derivative", (r) => here(r) && String(r["transactionid"]) === item.provider_harvest_id))
    case "lab_results":
      return newest(rows("inventory_qa_sample", (r) => here(r) && r["inventoryid"] === item.provider_result_id))
    case "transfers": {
      const [manifest, stop] = String(item.provider_transfer_id).split("/")
      const on = (r: Record<string, any>) => String(r["manifestid"]) === manifest
      return newest([
        ...rows("manifest", on),
        ...rows("manifest_stop_data", (r) => on(r) && String(r["stopnumber"]) === stop),
        ...rows("manifest_stop_items", (r) => on(r) && String(r["stopnumber"]) === stop),
        ...rows("inventory_transfer", (r) => on(r) && String(r["manifest_stop"]) === stop),
        ...rows("inventory_transfer_inbound", (r) => on(r) && String(r["manifest_stop"]) === stop)
      ])
    }
    case "sales":
      return newest(rows("sale", (r) => here(r) && String(r["transactionid"]) === item.provider_sale_id))
    case "items":
      return newest(rows("inventory", (r) =>
        here(r) &&
        `${r["inventorytype"]}:${(r["productname"] as string | null)?.trim() || item.name}` === item.provider_item_id))
    case "strains":
      return newest([
        ...rows("inventory", (r) => here(r) && (r["strain"] as string | null)?.trim() === item.name),
        ...rows("plant", (r) => here(r) && (r["strain"] as string | null)?.trim() === item.name)
      ])
    case "locations": {
      const [kind, roomid] = String(item.provider_location_id).split(":")
      return newest(rows(kind === "plant" ? "plant_room" : "inventory_room", (r) => here(r) && r["roomid"] === roomid))
    }
    default:
      return undefined
  }
}
