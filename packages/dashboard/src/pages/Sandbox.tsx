/**
 * The Sandbox page: make a sandbox connection with one of the sandbox's test logins, and on a
 * sandbox connection run a scenario, set or clear an upstream fault, and reset it. Every call runs
 * `/v1/sandbox`'s own code (`/dashboard/api/sandbox/…`), so events, webhooks and status moves are
 * those of the API. Every role reads; developer and up act.
 */
import type { SandboxConnectionCreate } from "@tracebridge/api/DashboardApi"
import { useEffect, useState } from "react"
import type { Client, Session } from "../Client.js"
import { call, Problem } from "../Client.js"
import { Confirm, ErrorText, Notice, Page, Table, useLoad } from "../Ui.js"

const loginLabels: Record<string, string> = {
  good: "Works (user_good)",
  bad: "Refused: a wrong login (user_bad)",
  locked: "Refused: a locked account (user_locked)"
}

/** The scenario's `params` from the text field: empty for none, else a JSON object. */
const paramsOf = (text: string): Record<string, unknown> | undefined | Problem => {
  if (text.trim() === "") return undefined
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>
    }
  } catch {
    // below
  }
  return new Problem(
    "Parameters must be a JSON object, for example {\"result\": \"fail\"}, or empty.",
    400,
    "invalid_parameter",
    "params"
  )
}

type Create = typeof SandboxConnectionCreate.Type

type SetFault = Parameters<Client["sandbox"]["setFault"]>[0]

type FaultBody =
  | { readonly kind: "outage" }
  | { readonly kind: "slow"; readonly delay_ms?: number }
  | { readonly kind: "rate_limited"; readonly retry_after?: number }
  | { readonly kind: "malformed" }
  | { readonly kind: "expired_login" }

/** The fault from the form: the kind, and a number for `slow` and `rate_limited` when given. */
const faultOf = (kind: string, amount: string): FaultBody | Problem => {
  const n = amount.trim() === "" ? undefined : Number(amount)
  if (n !== undefined && !Number.isInteger(n)) {
    return new Problem("The number must be a whole number.", 400, "invalid_parameter", "fault")
  }
  switch (kind) {
    case "slow":
      return n === undefined ? { kind } : { kind, delay_ms: n }
    case "rate_limited":
      return n === undefined ? { kind } : { kind, retry_after: n }
    case "outage":
    case "malformed":
    case "expired_login":
      return { kind }
    default:
      return new Problem("Choose a fault.", 400, "invalid_parameter", "kind")
  }
}

const describeFault = (fault: unknown): string => {
  if (fault === null || fault === undefined) return "none"
  const f = fault as Record<string, unknown>
  const extra = Object.entries(f).filter(([k]) => k !== "kind").map(([k, v]) => `${k} ${String(v)}`)
  return extra.length === 0 ? String(f.kind) : `${String(f.kind)} (${extra.join(", ")})`
}

export const Sandbox = ({ me }: { readonly me: Session }) => {
  const canAct = me.role !== "viewer"
  const options = useLoad(() => call((c) => c.sandbox.options()), [])
  // the list is oldest first: its last two pages of 100 hold the newest connections
  const connections = useLoad(async () => {
    const first = await call((c) => c.connections.list({ urlParams: { per_page: 100 } }))
    const pages = Math.max(1, Math.ceil(first.total / 100))
    const wanted = [...new Set([Math.max(1, pages - 1), pages])]
    const read = await Promise.all(
      wanted.map((page) =>
        page === 1 ? Promise.resolve(first) : call((c) => c.connections.list({ urlParams: { per_page: 100, page } }))
      )
    )
    return read.flatMap((p) => p.data)
  }, [])
  const sandboxConnections = (connections.data ?? []).filter((c) => c.is_sandbox && c.status !== "inactive")
    .reverse()
  const [selected, setSelected] = useState("")
  const current = sandboxConnections.find((c) => c.id === selected) ?? sandboxConnections[0]
  const fault = useLoad(
    () =>
      current === undefined
        ? Promise.resolve(undefined)
        : call((c) => c.sandbox.fault({ path: { connection_id: current.id } })),
    [current?.id]
  )

  // make a connection
  const [provider, setProvider] = useState("")
  const [state, setState] = useState("")
  const [login, setLogin] = useState("good")
  const [externalId, setExternalId] = useState("")
  const providers = options.data?.providers ?? []
  const chosenProvider = providers.find((p) => p.name === provider) ?? providers[0]
  const states = chosenProvider?.states ?? []
  useEffect(() => {
    if (chosenProvider !== undefined && !chosenProvider.states.includes(state)) setState(chosenProvider.states[0] ?? "")
  }, [chosenProvider, state])

  // actions on the chosen connection
  const [scenario, setScenario] = useState("")
  const [params, setParams] = useState("")
  const [faultKind, setFaultKind] = useState("expired_login")
  const [amount, setAmount] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const [notice, setNotice] = useState<string | undefined>()
  const [event, setEvent] = useState<string | undefined>()
  const scenarios = options.data?.scenarios ?? []
  const chosenScenario = scenario === "" ? scenarios[0] ?? "" : scenario

  function act<A>(run: () => Promise<A>, done: (a: A) => string) {
    setError(undefined)
    setNotice(undefined)
    setBusy(true)
    run().then((a) => {
      setBusy(false)
      setNotice(done(a))
      connections.reload()
      fault.reload()
    }, (e) => {
      setBusy(false)
      setError(e)
      connections.reload()
    })
  }

  const make = () =>
    act(
      () =>
        call((c) =>
          c.sandbox.create({
            payload: {
              provider: (chosenProvider?.name ?? "") as Create["provider"],
              state: state as Create["state"],
              login: login as NonNullable<Create["login"]>,
              ...(externalId.trim() === "" ? {} : { external_id: externalId.trim() })
            }
          })
        ),
      (made) => {
        setSelected(made.id)
        setEvent(undefined)
        return `${made.id} was made (${made.provider}, ${made.state}): ${made.status}.`
      }
    )

  const simulate = (id: string) => {
    const p = paramsOf(params)
    if (p instanceof Problem) {
      setError(p)
      return
    }
    act(
      () =>
        call((c) =>
          c.sandbox.simulate({
            path: { connection_id: id },
            payload: { scenario: chosenScenario, ...(p === undefined ? {} : { params: p }) }
          })
        ),
      (ran) => {
        setEvent(ran.event === null ? undefined : JSON.stringify(ran.event, null, 2))
        return ran.event === null
          ? `${ran.scenario} ran; it fires no event.`
          : `${ran.scenario} ran: event ${ran.event.id} (${ran.event.type}), queued for ${ran.deliveries} webhook ${
            ran.deliveries === 1 ? "endpoint" : "endpoints"
          }.`
      }
    )
  }

  const setFault = (id: string) => {
    const body = faultOf(faultKind, amount)
    if (body instanceof Problem) {
      setError(body)
      return
    }
    act(
      // one request whichever kind: the client's overloads take one member of the union at a time
      () => call((c) => c.sandbox.setFault({ path: { connection_id: id }, payload: body } as SetFault)),
      () => `Fault set: ${describeFault(body)}. The state system answers with it until it is cleared or reset.`
    )
  }

  return (
    <Page title="Sandbox">
      <p className="muted">
        Sandbox connections and what happens to them. These run the API's own <code>/v1/sandbox</code>{" "}
        calls: events go to your webhooks, and the connection's status moves as it would.
      </p>
      <ErrorText error={options.error ?? connections.error} />

      {canAct && options.data !== undefined && (
        <>
          <h2>Make a sandbox connection</h2>
          <form
            className="form row"
            aria-label="Make a sandbox connection"
            onSubmit={(e) => {
              e.preventDefault()
              make()
            }}
          >
            <div className="field">
              <label htmlFor="sb-provider">Provider</label>
              <select id="sb-provider" value={chosenProvider?.name ?? ""} onChange={(e) => setProvider(e.target.value)}>
                {providers.map((p) => <option key={p.name} value={p.name}>{p.display_name} ({p.name})</option>)}
              </select>
            </div>
            <div className="field">
              <label htmlFor="sb-state">State</label>
              <select id="sb-state" value={state} onChange={(e) => setState(e.target.value)}>
                {states.map((s) => <option key={s} value={s}>{s}</option>)}
              </select>
            </div>
            <div className="field">
              <label htmlFor="sb-login">Sandbox login</label>
              <select id="sb-login" value={login} onChange={(e) => setLogin(e.target.value)}>
                {options.data.logins.map((l) => <option key={l} value={l}>{loginLabels[l] ?? l}</option>)}
              </select>
            </div>
            <div className="field">
              <label htmlFor="sb-external">External ID (optional)</label>
              <input id="sb-external" value={externalId} onChange={(e) => setExternalId(e.target.value)} />
            </div>
            <div className="field buttons">
              <button type="submit" className="primary" disabled={busy}>Make connection</button>
            </div>
          </form>
        </>
      )}

      {notice !== undefined && <Notice>{notice}</Notice>}
      <ErrorText error={error} />

      <h2>Sandbox connections</h2>
      {connections.data !== undefined && sandboxConnections.length === 0 && <p>No sandbox connection yet.</p>}
      {sandboxConnections.length > 0 && (
        <Table label="Sandbox connections">
          <thead>
            <tr>
              <th scope="col">Connection</th>
              <th scope="col">External ID</th>
              <th scope="col">Provider</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {sandboxConnections.map((c) => (
              <tr key={c.id}>
                <td>
                  <code>{c.id}</code>
                </td>
                <td>{c.external_id ?? "—"}</td>
                <td>{c.provider} · {c.state}</td>
                <td>
                  <span className={`status status-${c.status}`}>{c.status}</span>
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}

      {current !== undefined && (
        <section aria-labelledby="sb-tools">
          <h2 id="sb-tools">Tools</h2>
          <div className="form narrow">
            <label htmlFor="sb-connection">Connection</label>
            <select id="sb-connection" value={current.id} onChange={(e) => setSelected(e.target.value)}>
              {sandboxConnections.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.id}
                  {c.external_id === null ? "" : ` (${c.external_id})`}
                </option>
              ))}
            </select>
          </div>
          <dl className="pairs spaced" aria-label="The chosen connection">
            <dt>Status</dt>
            <dd>
              <span className={`status status-${current.status}`} id="sb-status">{current.status}</span>
            </dd>
            <dt>Fault</dt>
            <dd id="sb-fault">{fault.data === undefined ? "…" : describeFault(fault.data.fault)}</dd>
          </dl>
          <ErrorText error={fault.error} />

          {!canAct && <p className="muted">Developers, admins and owners run scenarios, set faults and reset.</p>}
          {canAct && (
            <>
              <h3>Simulate</h3>
              <form
                className="form narrow"
                aria-label="Simulate a scenario"
                onSubmit={(e) => {
                  e.preventDefault()
                  simulate(current.id)
                }}
              >
                <label htmlFor="sb-scenario">Scenario</label>
                <select id="sb-scenario" value={chosenScenario} onChange={(e) => setScenario(e.target.value)}>
                  {scenarios.map((s) => <option key={s} value={s}>{s}</option>)}
                </select>
                <label htmlFor="sb-params">Parameters (JSON, optional)</label>
                <textarea
                  id="sb-params"
                  rows={2}
                  value={params}
                  placeholder='{"result": "fail"}'
                  onChange={(e) => setParams(e.target.value)}
                />
                <button type="submit" className="primary" disabled={busy}>Run scenario</button>
              </form>
              {event !== undefined && (
                <>
                  <h4>The event it fired</h4>
                  <pre className="body">{event}</pre>
                </>
              )}

              <h3>Upstream fault</h3>
              <form
                className="form row"
                aria-label="Set a fault"
                onSubmit={(e) => {
                  e.preventDefault()
                  setFault(current.id)
                }}
              >
                <div className="field">
                  <label htmlFor="sb-fault-kind">Fault</label>
                  <select id="sb-fault-kind" value={faultKind} onChange={(e) => setFaultKind(e.target.value)}>
                    {(options.data?.fault_kinds ?? []).map((k) => <option key={k} value={k}>{k}</option>)}
                  </select>
                </div>
                {(faultKind === "slow" || faultKind === "rate_limited") && (
                  <div className="field">
                    <label htmlFor="sb-fault-amount">
                      {faultKind === "slow" ? "Delay, ms (optional)" : "Retry-After, seconds (optional)"}
                    </label>
                    <input
                      id="sb-fault-amount"
                      inputMode="numeric"
                      value={amount}
                      onChange={(e) => setAmount(e.target.value)}
                    />
                  </div>
                )}
                <div className="field buttons">
                  <button type="submit" disabled={busy}>Set fault</button>
                  <button
                    type="button"
                    disabled={busy}
                    onClick={() =>
                      act(
                        () => call((c) => c.sandbox.clearFault({ path: { connection_id: current.id } })),
                        () => "Fault cleared: the state system answers normally again."
                      )}
                  >
                    Clear fault
                  </button>
                </div>
              </form>

              <h3>Reset</h3>
              <p className="muted">Back to the seeded world: its writes, scenarios and fault are gone.</p>
              <Confirm
                label="Reset…"
                question={`Reset ${current.id}?`}
                confirmLabel="Yes, reset"
                busy={busy}
                onConfirm={() =>
                  act(
                    () => call((c) => c.sandbox.reset({ path: { connection_id: current.id } })),
                    (done) => `${done.connection_id} was reset at ${done.reset_at}.`
                  )}
              />
            </>
          )}
        </section>
      )}
    </Page>
  )
}
