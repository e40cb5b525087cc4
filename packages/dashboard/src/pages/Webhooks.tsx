/**
 * The Webhooks page: the organisation's endpoints with their events, status and last day's
 * deliveries; for a developer and up, creating one (its signing secret shown once), editing its
 * events, rotating its secret (shown once), disabling and enabling it, and sending it a test event.
 * Below, the deliveries across every endpoint (or one), filtered by outcome and time, each with
 * every attempt (response code, latency, the answer's preview as text), a Resend, and "Resend
 * failed" over a time range. A viewer reads, and never sees a button that changes anything.
 */
import type {
  AllDeliveriesQuery,
  DeliveryEntry,
  WebhookEntry,
  WebhookSecret,
  WebhookTestResult
} from "@tracebridge/api/DashboardApi"
import { MAX_RESEND_FAILED, WebhookCreate } from "@tracebridge/api/DashboardApi"
import { useState } from "react"
import type { Session } from "../Client.js"
import { call, Problem } from "../Client.js"
import type { FilterField } from "../Ui.js"
import {
  Confirm,
  CursorPager,
  ErrorText,
  FilterForm,
  formatTime,
  fromUtcInput,
  Notice,
  Page,
  SecretReveal,
  Table,
  toUtcInput,
  useCursorPages,
  useFilters,
  useLoad
} from "../Ui.js"

type Webhook = typeof WebhookEntry.Type
type Delivery = typeof DeliveryEntry.Type
type Query = typeof AllDeliveriesQuery.Type
type EventType = typeof WebhookCreate.fields.events.from.value.Type

/** Every event an endpoint can ask for, from the contract. */
const eventTypes: ReadonlyArray<EventType> = WebhookCreate.fields.events.from.value.literals

const outcomes = ["pending", "retrying", "succeeded", "failed"] as const

/** A delivery's outcome, as the filters name it: `retrying` is pending after a failed attempt. */
const outcomeOf = (d: Delivery) => d.status === "pending" && d.attempts > 0 ? "retrying" : d.status

const outcomeClass = (outcome: string) =>
  outcome === "succeeded" ? "status-ok" : outcome === "failed" ? "status-error" : "status-warn"

/** Checkboxes for the events, in a fieldset of their own. */
const EventPicker = (
  { idPrefix, legend, onChange, selected }: {
    readonly idPrefix: string
    readonly legend: string
    readonly selected: ReadonlyArray<string>
    readonly onChange: (events: ReadonlyArray<EventType>) => void
  }
) => (
  <fieldset className="events">
    <legend>{legend}</legend>
    {eventTypes.map((e) => (
      <label key={e} className="check" htmlFor={`${idPrefix}-${e}`}>
        <input
          id={`${idPrefix}-${e}`}
          type="checkbox"
          checked={selected.includes(e)}
          onChange={(event) =>
            onChange(
              event.target.checked
                ? eventTypes.filter((t) => t === e || selected.includes(t))
                : eventTypes.filter((t) => t !== e && selected.includes(t))
            )}
        />
        <code>{e}</code>
      </label>
    ))}
  </fieldset>
)

const CreateForm = (
  { onCancel, onCreated }: {
    readonly onCreated: (made: typeof WebhookSecret.Type) => void
    readonly onCancel: () => void
  }
) => {
  const [url, setUrl] = useState("")
  const [description, setDescription] = useState("")
  const [events, setEvents] = useState<ReadonlyArray<EventType>>([])
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  return (
    <form
      className="form narrow panel"
      aria-label="New webhook endpoint"
      onSubmit={(event) => {
        event.preventDefault()
        if (events.length === 0) {
          setError(new Problem("Choose at least one event to send to this endpoint.", 400, undefined, "events"))
          return
        }
        setBusy(true)
        setError(undefined)
        call((c) =>
          c.webhooks.create({
            payload: {
              url: url.trim(),
              events,
              ...(description.trim() === "" ? {} : { description: description.trim() })
            }
          })
        ).then((made) => {
          setBusy(false)
          onCreated(made)
        }, (e) => {
          setBusy(false)
          setError(e)
        })
      }}
    >
      <h2>New endpoint</h2>
      <label htmlFor="w-url">URL</label>
      <input
        id="w-url"
        type="url"
        required
        value={url}
        placeholder="https://example.com/webhooks"
        onChange={(e) => setUrl(e.target.value)}
      />
      <label htmlFor="w-description">Description (optional)</label>
      <input id="w-description" value={description} onChange={(e) => setDescription(e.target.value)} />
      <EventPicker idPrefix="w-new" legend="Events" selected={events} onChange={setEvents} />
      <ErrorText error={error} />
      <p className="actions">
        <button type="submit" className="primary" disabled={busy}>Create endpoint</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </p>
    </form>
  )
}

const EditEvents = (
  { onSaved, webhook }: { readonly webhook: Webhook; readonly onSaved: (w: Webhook) => void }
) => {
  const [open, setOpen] = useState(false)
  const [events, setEvents] = useState<ReadonlyArray<string>>(webhook.events)
  const [error, setError] = useState<unknown>()
  if (!open) {
    return (
      <button
        type="button"
        onClick={() => {
          setEvents(webhook.events)
          setOpen(true)
        }}
      >
        Edit events
      </button>
    )
  }
  return (
    <form
      className="inline-form panel"
      aria-label={`Events of ${webhook.url}`}
      onSubmit={(event) => {
        event.preventDefault()
        const chosen = eventTypes.filter((t) => events.includes(t))
        if (chosen.length === 0) {
          setError(new Problem("Choose at least one event.", 400, undefined, "events"))
          return
        }
        call((c) => c.webhooks.edit({ path: { webhook_id: webhook.id }, payload: { events: chosen } })).then(
          (saved) => {
            setOpen(false)
            onSaved(saved)
          },
          setError
        )
      }}
    >
      <EventPicker idPrefix={`w-${webhook.id}`} legend="Events" selected={events} onChange={setEvents} />
      <button type="submit" className="primary">Save events</button>
      <button type="button" onClick={() => setOpen(false)}>Cancel</button>
      <ErrorText error={error} />
    </form>
  )
}

/** What a test event met, in words. */
const TestOutcome = ({ result, url }: { readonly result: typeof WebhookTestResult.Type; readonly url: string }) => (
  <div className={result.delivered ? "notice" : "error"} role="status">
    <p>
      {result.delivered
        ? `Test event ${result.event_id} delivered to ${url}: ${result.status_code} in ${
          Math.round(result.duration_ms)
        } ms.`
        : `Test event ${result.event_id} to ${url} failed: ${result.error ?? "no answer"}.`}
    </p>
    {result.response_preview !== null && result.response_preview !== "" && (
      <pre className="body" aria-label="The receiver's answer">{result.response_preview}</pre>
    )}
  </div>
)

/** One delivery's attempts, read when opened. */
const Attempts = ({ delivery }: { readonly delivery: Delivery }) => {
  const detail = useLoad(
    () => call((c) => c.webhooks.delivery({ path: { delivery_id: delivery.id } })),
    [delivery.id, delivery.updated_at]
  )
  if (detail.error !== undefined) return <ErrorText error={detail.error} />
  if (detail.data === undefined) return <p role="status">Loading…</p>
  if (detail.data.attempt_log.length === 0) return <p className="muted">Not attempted yet.</p>
  return (
    <ol className="attempts" aria-label={`Attempts of ${delivery.id}`}>
      {detail.data.attempt_log.map((a) => (
        <li key={a.attempt}>
          <p>
            <strong>Attempt {a.attempt}</strong> · {formatTime(a.at)} ·{" "}
            <span className={`status ${a.status_code !== null && a.status_code < 300 ? "status-ok" : "status-error"}`}>
              {a.status_code ?? "no answer"}
            </span>{" "}
            · {Math.round(a.duration_ms)} ms
          </p>
          {a.error !== null && <p className="muted">{a.error}</p>}
          {a.response_preview !== null && <pre className="body">{a.response_preview}</pre>}
        </li>
      ))}
    </ol>
  )
}

interface DeliveryFilters {
  readonly webhook_id: string
  readonly outcome: string
  readonly from: string
  readonly to: string
}
const noFilters: DeliveryFilters = { webhook_id: "", outcome: "", from: "", to: "" }

const queryOf = (f: DeliveryFilters, cursor: string | undefined): Query | Problem => {
  const from = fromUtcInput(f.from)
  const to = fromUtcInput(f.to)
  if (f.from.trim() !== "" && from === undefined) return new Problem("From is not a time.", 400, undefined, "from")
  if (f.to.trim() !== "" && to === undefined) return new Problem("To is not a time.", 400, undefined, "to")
  return {
    ...(f.webhook_id === "" ? {} : { webhook_id: f.webhook_id }),
    ...(f.outcome === "" ? {} : { outcome: f.outcome as NonNullable<Query["outcome"]> }),
    ...(from === undefined ? {} : { created_from: from }),
    // to the end of the minute given
    ...(to === undefined ? {} : { created_to: to + 59_999 }),
    ...(cursor === undefined ? {} : { cursor }),
    limit: 25
  }
}

const ResendFailed = (
  { onDone, webhooks }: { readonly webhooks: ReadonlyArray<Webhook>; readonly onDone: (message: string) => void }
) => {
  const [from, setFrom] = useState(() => toUtcInput(Date.now() - 86_400_000))
  // empty: the range ends at the press, not when the page was opened
  const [to, setTo] = useState("")
  const [webhookId, setWebhookId] = useState("")
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  return (
    <form
      className="form filters panel"
      aria-label="Resend failed deliveries"
      onSubmit={(event) => {
        event.preventDefault()
        const start = fromUtcInput(from)
        const end = to === "" ? Date.now() : fromUtcInput(to)
        if (start === undefined || end === undefined) {
          setError(new Problem("Give the range's start, and its end or nothing for now.", 400, undefined, "from"))
          return
        }
        setBusy(true)
        setError(undefined)
        call((c) =>
          c.webhooks.resendFailed({
            payload: {
              created_from: start,
              created_to: to === "" ? end : end + 59_999,
              ...(webhookId === "" ? {} : { webhook_id: webhookId })
            }
          })
        ).then((r) => {
          setBusy(false)
          onDone(
            r.queued === 0
              ? "No failed delivery was made in that range."
              : `${r.queued} failed ${r.queued === 1 ? "delivery is" : "deliveries are"} queued again.`
          )
        }, (e) => {
          setBusy(false)
          setError(e)
        })
      }}
    >
      <h2 className="full">Resend failed deliveries</h2>
      <p className="muted full">
        Every delivery that failed for good, made in this range (UTC), is sent again: at most {MAX_RESEND_FAILED}{" "}
        per press.
      </p>
      <p id="r-range-hint" className="muted full">Leave "To" empty to include everything up to the moment you press.</p>
      <div className="field">
        <label htmlFor="r-from">From (UTC)</label>
        <input id="r-from" type="datetime-local" value={from} onChange={(e) => setFrom(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="r-to">To (UTC)</label>
        <input
          id="r-to"
          type="datetime-local"
          value={to}
          aria-describedby="r-range-hint"
          onChange={(e) => setTo(e.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor="r-endpoint">Endpoint</label>
        <select id="r-endpoint" value={webhookId} onChange={(e) => setWebhookId(e.target.value)}>
          <option value="">All endpoints</option>
          {webhooks.map((w) => <option key={w.id} value={w.id}>{w.url}</option>)}
        </select>
      </div>
      <div className="field buttons">
        <button type="submit" className="primary" disabled={busy}>Resend failed</button>
      </div>
      <ErrorText error={error} />
    </form>
  )
}

const Deliveries = (
  { canManage, endpointFilter, webhooks }: {
    readonly webhooks: ReadonlyArray<Webhook>
    readonly canManage: boolean
    readonly endpointFilter: { readonly id: string; readonly tick: number }
  }
) => {
  const filters = useFilters(noFilters)
  const [seenFilter, setSeenFilter] = useState(endpointFilter.tick)
  const pages = useCursorPages()
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set())
  const [notice, setNotice] = useState<string | undefined>()
  const [error, setError] = useState<unknown>()
  // "Deliveries" on an endpoint's row: this list, of that endpoint
  if (endpointFilter.tick !== seenFilter) {
    setSeenFilter(endpointFilter.tick)
    filters.replace({ ...noFilters, webhook_id: endpointFilter.id })
    pages.first()
  }
  const list = useLoad(() => {
    const query = queryOf(filters.applied, pages.cursor)
    return query instanceof Problem
      ? Promise.reject(query)
      : call((c) => c.webhooks.allDeliveries({ urlParams: query }))
  }, [filters.applied, pages.cursor])
  const urlOf = new Map(webhooks.map((w) => [w.id, w.url]))
  const fields: ReadonlyArray<FilterField<keyof DeliveryFilters>> = [
    {
      name: "webhook_id",
      id: "d-endpoint",
      label: "Endpoint",
      any: "All endpoints",
      options: webhooks.map((w) => [w.id, w.url] as const)
    },
    { name: "outcome", id: "d-outcome", label: "Outcome", options: outcomes },
    { name: "from", id: "d-from", label: "From (UTC)", type: "datetime-local" },
    { name: "to", id: "d-to", label: "To (UTC)", type: "datetime-local" }
  ]
  const toggle = (id: string) => {
    const next = new Set(open)
    if (next.has(id)) next.delete(id)
    else next.add(id)
    setOpen(next)
  }
  const resend = (d: Delivery) => {
    setError(undefined)
    setNotice(undefined)
    call((c) => c.webhooks.resend({ path: { delivery_id: d.id } })).then(() => {
      setNotice(`Delivery ${d.id} is due again now.`)
      setOpen(new Set([...open, d.id]))
      list.reload()
    }, setError)
  }

  return (
    <section aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Deliveries</h2>
      <FilterForm
        label="Filter deliveries"
        fields={fields}
        filters={filters}
        onFilter={() => {
          pages.first()
          list.reload()
        }}
        onClear={pages.first}
      />
      {notice !== undefined && <Notice>{notice}</Notice>}
      <ErrorText error={error ?? list.error} />
      {list.data !== undefined && (
        <>
          {list.data.data.length === 0 ? <p role="status">No deliveries match.</p> : (
            <Table label="Deliveries">
              <thead>
                <tr>
                  <th scope="col">Made</th>
                  <th scope="col">Event</th>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last code</th>
                  <th scope="col">Next attempt</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((d) => {
                  const outcome = outcomeOf(d)
                  return [
                    <tr key={d.id}>
                      <td>{formatTime(d.created_at)}</td>
                      <td>
                        <code>{d.event_type}</code>
                        <div className="muted">
                          <code>{d.event_id}</code>
                        </div>
                      </td>
                      <td className="url">{urlOf.get(d.webhook_id) ?? d.webhook_id}</td>
                      <td>
                        <span className={`status ${outcomeClass(outcome)}`}>{outcome}</span>
                      </td>
                      <td>{d.attempts}</td>
                      <td>{d.last_status_code ?? "—"}</td>
                      <td>{formatTime(d.next_attempt_at)}</td>
                      <td className="row-actions">
                        <button type="button" aria-expanded={open.has(d.id)} onClick={() => toggle(d.id)}>
                          {open.has(d.id) ? "Hide attempts" : "Attempts"}
                        </button>
                        {canManage && <button type="button" onClick={() => resend(d)}>Resend</button>}
                      </td>
                    </tr>,
                    open.has(d.id) && (
                      <tr key={`${d.id}-attempts`} className="detail">
                        <td colSpan={8}>
                          <Attempts delivery={d} />
                        </td>
                      </tr>
                    )
                  ]
                })}
              </tbody>
            </Table>
          )}
          <CursorPager pages={pages} next={list.data.next_cursor}>
            <button type="button" onClick={() => list.reload()}>Refresh</button>
          </CursorPager>
        </>
      )}
      {canManage && (
        <ResendFailed
          webhooks={webhooks}
          onDone={(message) => {
            setNotice(message)
            list.reload()
          }}
        />
      )}
    </section>
  )
}

export const Webhooks = ({ me }: { readonly me: Session }) => {
  const hooks = useLoad(() => call((c) => c.webhooks.list()), [])
  const [creating, setCreating] = useState(false)
  const [secret, setSecret] = useState<{ readonly made: typeof WebhookSecret.Type }>()
  const [tested, setTested] = useState<{ readonly result: typeof WebhookTestResult.Type; readonly url: string }>()
  const [notice, setNotice] = useState<string | undefined>()
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState<string | undefined>()
  const [endpointFilter, setEndpointFilter] = useState({ id: "", tick: 0 })
  const canManage = me.role !== "viewer"

  function act<A>(id: string, run: () => Promise<A>, then: (a: A) => void) {
    setError(undefined)
    setNotice(undefined)
    setTested(undefined)
    setBusy(id)
    run().then((a) => {
      setBusy(undefined)
      then(a)
      hooks.reload()
    }, (e) => {
      setBusy(undefined)
      setError(e)
    })
  }

  return (
    <Page
      title="Webhooks"
      actions={canManage && !creating && (
        <button type="button" className="primary" onClick={() => setCreating(true)}>Create endpoint</button>
      )}
    >
      <p className="muted">
        Each endpoint receives the events it asks for, signed with its secret (<code>X-Tracebridge-Signature</code>).
        {canManage ? "" : " Your role (viewer) can read this page; a developer or above changes endpoints."}
      </p>
      {creating && (
        <CreateForm
          onCancel={() => setCreating(false)}
          onCreated={(made) => {
            setCreating(false)
            setSecret({ made })
            hooks.reload()
          }}
        />
      )}
      {secret !== undefined && (
        <SecretReveal
          label="Signing secret"
          secret={secret.made.secret}
          onDone={() => setSecret(undefined)}
        >
          <dt>Endpoint</dt>
          <dd className="url">{secret.made.webhook.url}</dd>
          {secret.made.previous_secret_expires_at !== null && (
            <>
              <dt>Old secret signs until</dt>
              <dd>{formatTime(secret.made.previous_secret_expires_at)}</dd>
            </>
          )}
        </SecretReveal>
      )}
      {notice !== undefined && <Notice>{notice}</Notice>}
      {tested !== undefined && <TestOutcome result={tested.result} url={tested.url} />}
      <ErrorText error={error ?? hooks.error} />
      {hooks.data !== undefined && (
        hooks.data.data.length === 0 ? <p>No webhook endpoints yet.</p> : (
          <Table label="Endpoints">
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">Status</th>
                <th scope="col">Last 24 hours</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {hooks.data.data.map((w) => (
                <tr key={w.id}>
                  <td className="url">
                    {w.url}
                    {w.description !== null && <div className="muted">{w.description}</div>}
                    <div className="muted">
                      <code>{w.id}</code>
                    </div>
                  </td>
                  <td>
                    <ul className="plain">
                      {w.events.map((e) => (
                        <li key={e}>
                          <code>{e}</code>
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>
                    <span className={`status ${w.status === "enabled" ? "status-ok" : "status-inactive"}`}>
                      {w.status}
                    </span>
                  </td>
                  <td>
                    {w.deliveries_24h.succeeded} succeeded, {w.deliveries_24h.failed} failed,{" "}
                    {w.deliveries_24h.retrying} retrying, {w.deliveries_24h.pending} pending
                  </td>
                  <td>{formatTime(w.created_at)}</td>
                  <td className="row-actions">
                    <button
                      type="button"
                      onClick={() => setEndpointFilter({ id: w.id, tick: endpointFilter.tick + 1 })}
                    >
                      Deliveries
                    </button>
                    {canManage && (
                      <>
                        <EditEvents
                          webhook={w}
                          onSaved={(saved) => {
                            setNotice(`The events of ${saved.url} are saved.`)
                            hooks.reload()
                          }}
                        />
                        <button
                          type="button"
                          disabled={busy === w.id || w.status === "disabled"}
                          onClick={() =>
                            act(
                              w.id,
                              () => call((c) => c.webhooks.test({ path: { webhook_id: w.id } })),
                              (result) => setTested({ result, url: w.url })
                            )}
                        >
                          Send test event
                        </button>
                        <Confirm
                          label="Rotate secret"
                          question={`Rotate the secret of ${w.url}? The old one keeps signing for 24 hours.`}
                          confirmLabel="Yes, rotate"
                          onConfirm={() =>
                            act(
                              w.id,
                              () => call((c) => c.webhooks.rotateSecret({ path: { webhook_id: w.id } })),
                              (made) => setSecret({ made })
                            )}
                        />
                        {w.status === "enabled"
                          ? (
                            <Confirm
                              label="Disable"
                              question={`Disable ${w.url}? Its deliveries fail until it is enabled again.`}
                              confirmLabel="Yes, disable"
                              onConfirm={() =>
                                act(
                                  w.id,
                                  () => call((c) => c.webhooks.disable({ path: { webhook_id: w.id } })),
                                  (saved) => setNotice(`${saved.url} is disabled.`)
                                )}
                            />
                          )
                          : (
                            <button
                              type="button"
                              disabled={busy === w.id}
                              onClick={() =>
                                act(
                                  w.id,
                                  () => call((c) => c.webhooks.enable({ path: { webhook_id: w.id } })),
                                  (saved) => setNotice(`${saved.url} is enabled.`)
                                )}
                            >
                              Enable
                            </button>
                          )}
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        )
      )}
      {hooks.data !== undefined && (
        <Deliveries webhooks={hooks.data.data} canManage={canManage} endpointFilter={endpointFilter} />
      )}
    </Page>
  )
}
