/**
 * The provider_b emulator: BioTrack's classic action API over the sandbox world.
 *
 * - One endpoint, `POST /provider_b/{STATE}` (also `…/{STATE}/serverjson.asp`, the real hosts'
 *   path), with a JSON body carrying an `action` and `"API":"4.0"`. Any other path is the web
 *   server's 404 page; an unknown `action` is BioTrack's own refusal under HTTP 200.
 * - `login` checks the sandbox logins (`Logins.checkBioTrack`) and answers a session id. Sessions
 *   are kept here, per sandbox, and expire after an idle time (`configure`; default 30 minutes of
 *   `sandbox.now()`), after which every call answers errorcode 63.
 * - Every answer is HTTP 200 with `success` 1 or 0; failures carry `error` and usually `errorcode`
 *   (17 wrong API version, 62 missing privilege, 63 session expired, 602 validation or not found,
 *   200 lab-only results: only a session of the world's QA lab, `Logins.LAB_PREFIX`, enters QA
 *   results; a company login is refused, training mode or not).
 * - `sync_*` answers serve the login's world in BioTrack's rows (`rows.ts`), which the emulator
 *   writes itself in BioTrack's formats (`format.ts`: string numbers, epoch seconds, "0"/"1"
 *   flags): it does not use the adapter's wire schemas, so that a mistake in one of them fails the
 *   adapter's decoding instead of hiding. `test/providers/provider-b/Fidelity.test.ts` checks
 *   every answer against the recorded ones. `transaction_start` keeps the rows with a higher
 *   `transactionid`. Tables come as arrays, or, for the tables named in `configure`'s
 *   `keyedTables`, as objects keyed by row number, as BioTrack answers `sync_inventory` in the
 *   recordings (`format.ts` `keyed`).
 * - Writes (`inventory_split`, `inventory_convert`, `inventory_qa_sample`,
 *   `inventory_qa_sample_results`, `inventory_manifest`, `inventory_transfer_outbound`) change the
 *   world only through `sandbox.apply`.
 * - Faults for tests: `failNext` makes the next call of an action answer what it is told.
 * - The `connection_login_required` scenario (`world.loginRequired`): the login's sessions expire
 *   (errorcode 63) and its next login is refused once, so the adapter reports the login required.
 *
 * Everything is deterministic: session ids come from a counter and the sandbox seed, times from
 * `sandbox.now()`.
 *
 * @since 0.1.0
 */
import type { ProviderName } from "@tracebridge/core"
import { Either } from "effect"
import * as Faults from "../../Faults.js"
import { keyOf } from "../../internal/key.js"
import type { Sandbox } from "../../Sandbox.js"
import * as Sandboxes from "../../Sandbox.js"
import * as Seed from "../../Seed.js"
import * as World from "../../World.js"
import type { JsonObject } from "./format.js"
import { API_VERSION, keyed } from "./format.js"
import type { PendingSample } from "./rows.js"
import * as Rows from "./rows.js"
import * as Logins from "./testLogins.js"
import * as Writes from "./writeActions.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** How long a session lives without calls, in ms of `sandbox.now()`. */
  readonly sessionIdleMs: number
  /**
   * The tables (e.g. `"inventory"`) answered as an object keyed by row number (`{"0": row, …}`)
   * instead of an array; BioTrack answers both ways (recorded: `sync_inventory` keyed, the other
   * tables as arrays), so its clients must read both.
   */
  readonly keyedTables: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category constants
 */
export const defaults: Options = { sessionIdleMs: 30 * 60_000, keyedTables: [] }

/**
 * What the next call of an action answers instead of the world: a BioTrack failure, or any body
 * (and HTTP status), e.g. a malformed row.
 *
 * @since 0.1.0
 * @category models
 */
export type Fault =
  | { readonly _tag: "Failure"; readonly action: string; readonly error: string; readonly errorcode?: number }
  | { readonly _tag: "Body"; readonly action: string; readonly body: unknown; readonly status?: number }

/**
 * The errorcodes the emulator answers.
 *
 * @since 0.1.0
 * @category constants
 */
export const ErrorCodes = {
  apiVersion: 17,
  labOnly: Writes.LAB_ONLY,
  missingPrivilege: 62,
  sessionExpired: 63,
  validation: Writes.VALIDATION
} as const

interface SessionEntry {
  readonly state: ProviderName.UsState
  readonly login: string
  readonly ubi: string
  /** Signed in as the world's QA lab (`Logins.LAB_PREFIX`): may enter QA results. */
  readonly lab: boolean
  lastSeen: number
}

/** What the emulator keeps per sandbox: its sessions, the faults queued by `failNext`, its logins. */
interface EmulatorState {
  readonly sessions: Map<string, SessionEntry>
  readonly faults: Array<Fault>
  logins: number
}

const stateSlot = Sandboxes.slot<EmulatorState>("provider_b/emulator", () => ({
  sessions: new Map(),
  faults: [],
  logins: 0
}))
const optionsSlot = Sandboxes.slot<Options>("provider_b/options", () => defaults)
const memorySlot = World.slot<Writes.Memory>("provider_b/memory", () => ({ pending: new Map(), aliases: new Map() }))

const stateOf = (sandbox: Sandbox): EmulatorState => sandbox.slot(stateSlot)

const memoryOf = (world: World.World): Writes.Memory => World.slotOf(world, memorySlot)

/**
 * Sets the emulator's options for a sandbox.
 *
 * @since 0.1.0
 * @category configuration
 */
export const configure = (sandbox: Sandbox, options: Partial<Options>): void => {
  sandbox.configure(optionsSlot, { ...sandbox.setting(optionsSlot), ...options })
}

/**
 * Makes the next call of `fault.action` (after the session check) answer the fault.
 *
 * @since 0.1.0
 * @category faults
 */
export const failNext = (sandbox: Sandbox, fault: Fault): void => {
  stateOf(sandbox).faults.push(fault)
}

/**
 * Forgets every session of a sandbox (the next call of each answers errorcode 63).
 *
 * @since 0.1.0
 * @category sessions
 */
export const expireSessions = (sandbox: Sandbox): void => {
  stateOf(sandbox).sessions.clear()
}

/** The scenario flag on a world (`connection_login_required`). */
const flags = (world: World.World) => world as { loginRequired?: boolean }

const json = (body: unknown, status = 200): Response =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } })

/** BioTrack's failure: `{success: 0, error, errorcode?}` under HTTP 200. */
const failure = (error: string, errorcode?: number): Response =>
  json({ success: 0, error, ...(errorcode === undefined ? {} : { errorcode }) })

/**
 * What a path other than the action API's answers: the web server's 404 page, not the API's JSON
 * (the API answers only at `serverjson.asp`, and BioTrack's clients read any status but 200 as a
 * system error). The hosts serve classic ASP, so the page is IIS's; inferred, not recorded.
 */
const notFound = (): Response =>
  new Response(
    "<html><head><title>404 - File or directory not found.</title></head><body><h1>404 - File or directory not found.</h1>" +
      "<p>The resource you are looking for might have been removed, had its name changed, or is temporarily unavailable.</p>" +
      "</body></html>",
    { status: 404, headers: { "content-type": "text/html" } }
  )

/** What a faulted world answers before the world is consulted (outage, rate limit, broken body). */
const refusal = (fault: Faults.Fault | undefined): Response | undefined => {
  switch (fault?.kind) {
    case "outage":
      return Faults.outage()
    case "malformed":
      return Faults.malformed()
    case "rate_limited":
      return new Response("Too Many Requests", {
        status: 429,
        headers: { "content-type": "text/plain", "retry-after": String(Faults.retryAfterOf(fault)) }
      })
    default:
      return undefined
  }
}

const dropSessions = (emulator: EmulatorState, session: SessionEntry) => {
  for (const [id, s] of emulator.sessions) {
    if (s.state === session.state && s.login === session.login) emulator.sessions.delete(id)
  }
}

const text = (u: unknown): string => (typeof u === "string" ? u : typeof u === "number" ? String(u) : "")

/**
 * The id of the `n`th session: 64 hex digits, as BioTrack's (recorded) session ids, from the
 * sandbox seed; the counter is its last 8 digits, so that no two sessions share one.
 */
const sessionIdOf = (sandbox: Sandbox, n: number): string =>
  [...Array.from({ length: 7 }, (_, i) => Seed.integer(sandbox.options.seed, `biotrack-session-${i}`, n)), n]
    .map((x) => x.toString(16).padStart(8, "0"))
    .join("")

const login = (
  sandbox: Sandbox,
  emulator: EmulatorState,
  state: ProviderName.UsState,
  body: Record<string, unknown>
) => {
  const ubi = text(body["license_number"])
  const outcome = Logins.checkBioTrack(ubi, text(body["username"]), text(body["password"]))
  switch (outcome._tag) {
    case "Invalid":
      return failure("Invalid username or password.")
    case "Locked":
      return failure("This account has been locked after too many failed login attempts. Contact your administrator.")
    case "Ok": {
      const fault = sandbox.fault(keyOf("provider_b", state, outcome.login))
      // An expired or revoked login is refused as a wrong one (BioTrack words both the same).
      if (fault?.kind === "expired_login") return failure("Invalid username or password.")
      const refused = refusal(fault)
      if (refused !== undefined) return refused
      const world = sandbox.world("provider_b", state, outcome.login)
      if (flags(world).loginRequired === true) {
        // The connection_login_required scenario: the login is refused once, as after a password change.
        flags(world).loginRequired = false
        return failure("Invalid username or password.")
      }
      emulator.logins += 1
      const n = emulator.logins
      const now = sandbox.now()
      const sessionid = sessionIdOf(sandbox, n)
      const lab = Logins.isLabLogin(text(body["username"]))
      emulator.sessions.set(sessionid, { state, login: outcome.login, ubi, lab, lastSeen: now })
      return Faults.delayed(
        json({ success: 1, admin: 1, sessionid, time: Rows.seconds(now) }),
        Faults.delayFor(fault)
      )
    }
  }
}

const sync = (
  world: World.World,
  session: SessionEntry,
  action: Rows.SyncAction,
  body: Record<string, unknown>,
  pending: ReadonlyArray<PendingSample>,
  aliases: ReadonlyMap<string, string>,
  keyedTables: ReadonlyArray<string>
): Response => {
  const start = Number(text(body["transaction_start"]) || "0")
  const tables = Rows.tablesOf(world, session.ubi, pending, aliases)[action]()
  const kept = Object.fromEntries(
    Object.entries(tables).map(([table, rows]) => {
      const since = Number.isFinite(start) && start > 0 ? rows.filter((r) => Number(r["transactionid"]) > start) : rows
      return [table, keyedTables.includes(table) ? keyed(since) : since]
    })
  )
  return json({ success: 1, ...kept })
}

const qaCheck = (world: World.World, memory: Writes.Memory, body: Record<string, unknown>): Response => {
  const id = text(body["sample_id"])
  if (id.length === 0) return failure("Please specify at least one identifier.", ErrorCodes.validation)
  const found = Rows.samples(world, [...memory.pending.values()], memory.aliases).find((s) => s.barcode === id)
  if (found === undefined) return failure("Sample not found.", ErrorCodes.validation)
  return json({ success: 1, data: Rows.check(found) } satisfies JsonObject)
}

const writes: Record<string, (ctx: Writes.Context) => Either.Either<Writes.Written, Writes.Failure>> = {
  inventory_split: Writes.split,
  inventory_convert: Writes.convert,
  inventory_qa_sample: Writes.sample,
  inventory_qa_sample_results: Writes.results,
  inventory_manifest: Writes.manifest,
  inventory_transfer_outbound: Writes.outbound
}

/**
 * Every action the emulator answers: `login`, the sync actions, `inventory_qa_check` and the writes.
 *
 * @since 0.1.0
 * @category constants
 */
export const actions: ReadonlyArray<string> = [
  "login",
  ...Object.keys(Rows.syncActions),
  "inventory_qa_check",
  ...Object.keys(writes)
]

const act = (
  sandbox: Sandbox,
  session: SessionEntry,
  action: string,
  body: Record<string, unknown>
): Response => {
  const world = sandbox.world("provider_b", session.state, session.login)
  const memory = memoryOf(world)
  if (Rows.isSync(action)) {
    const pending = [...memory.pending.values()]
    return sync(world, session, action, body, pending, memory.aliases, sandbox.setting(optionsSlot).keyedTables)
  }
  if (action === "inventory_qa_check") return qaCheck(world, memory, body)
  const write = writes[action]
  if (write === undefined) return failure(`Invalid action: ${action}.`)
  return Either.match(write({ sandbox, world, memory, body, lab: session.lab }), {
    onLeft: (f) => failure(f.error, f.errorcode),
    onRight: (answer) => json(answer)
  })
}

/**
 * Answers one request for `/provider_b/{state}{path}`.
 *
 * @since 0.1.0
 * @category handlers
 */
export const handle = async (
  sandbox: Sandbox,
  state: ProviderName.UsState,
  path: string,
  request: Request
): Promise<Response> => {
  if (!/^\/?(serverjson\.asp)?$/i.test(path)) return notFound()
  if (request.method !== "POST") return new Response("Method Not Allowed", { status: 405, headers: { allow: "POST" } })
  const raw = await request.text()
  const parsed = Either.try(() => JSON.parse(raw) as unknown)
  if (Either.isLeft(parsed) || typeof parsed.right !== "object" || parsed.right === null) {
    return failure("Invalid JSON request.")
  }
  const body = parsed.right as Record<string, unknown>
  const action = text(body["action"])
  // As recorded (openthc/bunk); the recording answers it with HTTP 400, but BioTrack answers its
  // refusals under HTTP 200 and its clients treat any other status as a system error.
  if (text(body["API"]) !== API_VERSION) return failure("Invalid API Version", ErrorCodes.apiVersion)
  const emulator = stateOf(sandbox)
  if (action === "login") return login(sandbox, emulator, state, body)
  const sessionid = text(body["sessionid"])
  const session = emulator.sessions.get(sessionid)
  const now = sandbox.now()
  if (
    session === undefined || session.state !== state ||
    now - session.lastSeen > sandbox.setting(optionsSlot).sessionIdleMs
  ) {
    emulator.sessions.delete(sessionid)
    return failure("Your session has expired.", ErrorCodes.sessionExpired)
  }
  session.lastSeen = now
  const fault = sandbox.fault(keyOf("provider_b", session.state, session.login))
  if (fault?.kind === "expired_login") {
    dropSessions(emulator, session)
    return failure("Your session has expired.", ErrorCodes.sessionExpired)
  }
  const refused = refusal(fault)
  if (refused !== undefined) return refused
  return Faults.delayed(proceed(sandbox, emulator, session, action, body), Faults.delayFor(fault))
}

const proceed = (
  sandbox: Sandbox,
  emulator: EmulatorState,
  session: SessionEntry,
  action: string,
  body: Record<string, unknown>
): Response => {
  if (flags(sandbox.world("provider_b", session.state, session.login)).loginRequired === true) {
    dropSessions(emulator, session)
    return failure("Your session has expired.", ErrorCodes.sessionExpired)
  }
  const faultAt = emulator.faults.findIndex((f) => f.action === action)
  if (faultAt >= 0) {
    const fault = emulator.faults.splice(faultAt, 1)[0]!
    return fault._tag === "Failure" ? failure(fault.error, fault.errorcode) : json(fault.body, fault.status)
  }
  return act(sandbox, session, action, body)
}
