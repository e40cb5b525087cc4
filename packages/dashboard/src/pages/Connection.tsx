/**
 * A connection's page: the connection and its health (needs a relink, its sync failing or lagging,
 * its last error), its facilities' sync and each list's (backfill, last sync, last error), its
 * recent events and their deliveries, and its recent failed requests. For a developer and up:
 * **Relink** makes an update-mode link token and opens the real Connect widget with it (the user
 * enters the login again; the connection keeps its id and goes back to `active`), and **Delete**.
 */
import type { ConnectionDetail, FacilitySync } from "@tracebridge/api/DashboardApi"
import { create } from "@tracebridge/connect"
import { useEffect, useRef, useState } from "react"
import type { Session } from "../Client.js"
import { call, Problem } from "../Client.js"
import { BASE, Link } from "../Router.js"
import { Confirm, ErrorText, formatTime, Notice, Page, Table, useLoad } from "../Ui.js"

type Detail = typeof ConnectionDetail.Type
type Facility = typeof FacilitySync.Type

/** The connection's health in a few words, and its class. */
const healthOf = (d: Detail): readonly [string, string] => {
  const c = d.connection
  if (c.status === "inactive") return ["Deleted: its login is erased", "status-inactive"]
  if (c.needs_relink) return ["Needs a relink: the state system refused its login", "status-error"]
  if (d.facilities.some((f) => f.status === "error")) return ["Sync failing", "status-error"]
  if (d.facilities.some((f) => f.failing_since !== null)) return ["Sync retrying after failures", "status-warn"]
  if (d.facilities.some((f) => f.lagging)) return ["Sync lagging", "status-warn"]
  if (c.status === "pending") return ["Pending: its first sync has not finished", "status-pending"]
  return ["Healthy", "status-active"]
}

const minutes = (ms: number | null) =>
  ms === null ? "—" : ms < 60_000 ? "under a minute" : `${Math.round(ms / 60_000)} min`

const FacilitySection = ({ facility }: { readonly facility: Facility }) => (
  <section className="facility" aria-labelledby={`f-${facility.facility_id}`}>
    <h3 id={`f-${facility.facility_id}`}>
      Facility <code>{facility.facility_id}</code>
    </h3>
    <dl className="pairs">
      <dt>Sync</dt>
      <dd>
        <span
          className={`status ${
            facility.status === "error"
              ? "status-error"
              : facility.status === "backfilling" || facility.lagging
              ? "status-warn"
              : "status-ok"
          }`}
        >
          {facility.status}
          {facility.lagging ? " (lagging)" : ""}
        </span>
      </dd>
      <dt>Backfilled through</dt>
      <dd>{formatTime(facility.backfilled_through)}</dd>
      <dt>Last sync</dt>
      <dd>{formatTime(facility.last_synced_at)} ({minutes(facility.lag_ms)} ago)</dd>
      {facility.failing_since !== null && (
        <>
          <dt>Failing since</dt>
          <dd>{formatTime(facility.failing_since)}</dd>
        </>
      )}
      <dt>Last error</dt>
      <dd>{facility.last_error ?? "—"}</dd>
    </dl>
    {facility.resources.length === 0 ?
      <p className="muted">No list synced yet.</p> :
      (
        <Table label={`Lists of facility ${facility.facility_id}`}>
          <thead>
            <tr>
              <th scope="col">List</th>
              <th scope="col">Status</th>
              <th scope="col">Records</th>
              <th scope="col">Backfilled through</th>
              <th scope="col">Last sync</th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {facility.resources.map((r) => (
              <tr key={r.type}>
                <td>
                  <code>{r.type}</code>
                </td>
                <td>{r.status}</td>
                <td>{r.count}</td>
                <td>{formatTime(r.backfilled_through)}</td>
                <td>{formatTime(r.last_synced_at)}</td>
                <td>{r.last_error ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
  </section>
)

export const Connection = ({ connectionId, me }: { readonly connectionId: string; readonly me: Session }) => {
  const detail = useLoad(
    () => call((c) => c.connections.get({ path: { connection_id: connectionId } })),
    [connectionId]
  )
  const [error, setError] = useState<unknown>()
  const [notice, setNotice] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const relinkButton = useRef<HTMLButtonElement>(null)
  const widget = useRef<{ readonly destroy: () => void } | undefined>(undefined)
  // the widget goes with the page
  useEffect(() => () => widget.current?.destroy(), [])
  const canManage = me.role !== "viewer"
  const d = detail.data

  const relink = () => {
    setError(undefined)
    setNotice(undefined)
    setBusy(true)
    call((c) => c.connections.relink({ path: { connection_id: connectionId } })).then((made) => {
      const handle = create({
        token: made.link_token,
        onSuccess: () => {
          widget.current = undefined
          setBusy(false)
          setNotice("The login was entered again: the connection is relinked.")
          detail.reload()
          relinkButton.current?.focus()
        },
        onExit: (failure) => {
          widget.current = undefined
          setBusy(false)
          if (failure !== null) setError(new Problem(failure.message, undefined, failure.code, undefined))
          relinkButton.current?.focus()
        }
      })
      widget.current = handle
      handle.open()
    }, (e) => {
      setBusy(false)
      setError(e)
    })
  }

  const remove = () => {
    setError(undefined)
    setNotice(undefined)
    call((c) => c.connections.remove({ path: { connection_id: connectionId } })).then((c) => {
      setNotice(`${c.id} was deleted (now ${c.status}); its stored login is erased.`)
      detail.reload()
    }, setError)
  }

  const [health, healthClass] = d === undefined ? ["", ""] : healthOf(d)
  return (
    <Page
      title={`Connection ${connectionId}`}
      actions={canManage && d !== undefined && d.connection.status !== "inactive" && (
        <span className="actions">
          <button ref={relinkButton} type="button" className="primary" disabled={busy} onClick={relink}>
            Relink
          </button>
          <Confirm
            label="Delete"
            question={`Delete ${connectionId}? Its login is erased and its tokens revoked.`}
            confirmLabel="Yes, delete"
            onConfirm={remove}
          />
        </span>
      )}
    >
      <p>
        <Link to={`${BASE}/connections`}>Back to the connections</Link>
      </p>
      {notice !== undefined && <Notice>{notice}</Notice>}
      <ErrorText error={error ?? detail.error} />
      {d !== undefined && (
        <>
          <dl className="pairs">
            <dt>Health</dt>
            <dd>
              <span className={`status ${healthClass}`}>{health}</span>
            </dd>
            <dt>Status</dt>
            <dd>
              <span className={`status status-${d.connection.status}`}>{d.connection.status}</span>
            </dd>
            <dt>External ID</dt>
            <dd>{d.connection.external_id ?? "—"}</dd>
            <dt>Provider</dt>
            <dd>{d.connection.provider} in {d.connection.state}</dd>
            <dt>Environment</dt>
            <dd>{d.connection.environment}</dd>
            <dt>Created</dt>
            <dd>{formatTime(d.connection.created_at)}</dd>
            <dt>Updated</dt>
            <dd>{formatTime(d.connection.updated_at)}</dd>
            <dt>Last error</dt>
            <dd>
              {d.connection.last_error === null ? "—" : (
                <>
                  {d.connection.last_error.message} ({formatTime(d.connection.last_error.at)})
                  {d.connection.last_error.request_id !== null && (
                    <>
                      {" · "}
                      <Link to={`${BASE}/logs/${encodeURIComponent(d.connection.last_error.request_id)}`}>
                        the request
                      </Link>
                    </>
                  )}
                </>
              )}
            </dd>
          </dl>
          {d.connection.needs_relink && canManage && (
            <p className="error" role="status">
              The state system refused this connection's login. Press <strong>Relink</strong>{" "}
              and have its user enter the login again.
            </p>
          )}

          <h2>Facilities</h2>
          {d.facilities.length === 0
            ? (
              <p className="muted">
                The managed sync keeps no facility of this connection yet (a sandbox connection's sync starts with its
                first <code>GET /v1/connections/{"{id}"}/sync</code> or change-feed call).
              </p>
            )
            : d.facilities.map((f) => <FacilitySection key={f.facility_id} facility={f} />)}

          <h2>Recent events</h2>
          {d.events.length === 0 ?
            <p className="muted">No webhook event for this connection yet.</p> :
            (
              <Table label="Recent events">
                <thead>
                  <tr>
                    <th scope="col">Made</th>
                    <th scope="col">Event</th>
                    <th scope="col">Delivery</th>
                  </tr>
                </thead>
                <tbody>
                  {d.events.map((e) => (
                    <tr key={e.id}>
                      <td>{formatTime(e.created_at)}</td>
                      <td>
                        <code>{e.type}</code>
                        <div className="muted">
                          <code>{e.id}</code>
                        </div>
                      </td>
                      <td>
                        {e.delivery_status}
                        {e.deliveries.length > 0 &&
                          ` (${e.deliveries.map((x) => `${x.status}, ${x.attempts} attempts`).join("; ")})`}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            )}

          <h2>Recent failed requests</h2>
          {d.failed_requests.length === 0 ?
            <p className="muted">No failed request.</p> :
            (
              <Table label="Recent failed requests">
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Request</th>
                    <th scope="col">Status</th>
                    <th scope="col">Error</th>
                  </tr>
                </thead>
                <tbody>
                  {d.failed_requests.map((r) => (
                    <tr key={r.request_id}>
                      <td>{formatTime(r.at)}</td>
                      <td>
                        <Link to={`${BASE}/logs/${encodeURIComponent(r.request_id)}`}>
                          <code>{r.method} {r.route}</code>
                        </Link>
                      </td>
                      <td>{r.status}</td>
                      <td>{r.error_code ?? "—"}</td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            )}
        </>
      )}
    </Page>
  )
}
