/**
 * The Logs page: the organisation's `/v1` requests, newest first (time, method and route, status,
 * duration, error code, upstream calls, principal, connection linked to its page, request id),
 * filtered by status class, route, connection and request id, paged by cursor; and one request's page: its redacted request body,
 * its error answer, and each upstream call it made to the state system.
 */
import type { LogsQuery } from "@tracebridge/api/DashboardApi"
import { Fragment } from "react"
import { call } from "../Client.js"
import { BASE, Link } from "../Router.js"
import type { FilterField } from "../Ui.js"
import {
  CursorPager,
  ErrorText,
  FilterForm,
  formatTime,
  Page,
  Table,
  useCursorPages,
  useFilters,
  useLoad
} from "../Ui.js"

type Query = typeof LogsQuery.Type

interface Filters {
  readonly status_class: string
  readonly route: string
  readonly connection_id: string
  readonly request_id: string
}
const none: Filters = { status_class: "", route: "", connection_id: "", request_id: "" }

const fields: ReadonlyArray<FilterField<keyof Filters>> = [
  {
    name: "status_class",
    id: "l-status",
    label: "Status",
    options: [["2xx", "2xx (success)"], ["4xx", "4xx (refused)"], ["5xx", "5xx (failed)"]]
  },
  { name: "route", id: "l-route", label: "Route", placeholder: "/v1/packages" },
  { name: "connection_id", id: "l-connection", label: "Connection" },
  { name: "request_id", id: "l-request", label: "Request ID" }
]

const queryOf = (f: Filters, cursor: string | undefined): Query => ({
  ...(f.status_class === "" ? {} : { status_class: f.status_class as NonNullable<Query["status_class"]> }),
  ...(f.route.trim() === "" ? {} : { route: f.route.trim() }),
  ...(f.connection_id.trim() === "" ? {} : { connection_id: f.connection_id.trim() }),
  ...(f.request_id.trim() === "" ? {} : { request_id: f.request_id.trim() }),
  ...(cursor === undefined ? {} : { cursor }),
  limit: 25
})

const statusClass = (status: number) => status >= 500 ? "status-error" : status >= 400 ? "status-warn" : "status-ok"

/** A route that may wrap after each `/`, never inside a segment. */
const breakable = (route: string) =>
  route.split("/").map((part, i) => (
    <Fragment key={i}>
      {i > 0 && <wbr />}
      {i > 0 && "/"}
      {part}
    </Fragment>
  ))

export const Logs = () => {
  const filters = useFilters(none)
  const pages = useCursorPages()
  const list = useLoad(
    () => call((c) => c.logs.list({ urlParams: queryOf(filters.applied, pages.cursor) })),
    [filters.applied, pages.cursor]
  )

  return (
    <Page title="Logs">
      <FilterForm
        label="Filter requests"
        fields={fields}
        filters={filters}
        onFilter={() => {
          pages.first()
          // the same filters again: read the newest requests
          list.reload()
        }}
        onClear={pages.first}
      />
      <ErrorText error={list.error} />
      {list.data !== undefined && (
        <>
          {list.data.data.length === 0 ? <p role="status">No requests match.</p> : (
            <Table label="Requests">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Request</th>
                  <th scope="col">Status</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Error</th>
                  <th scope="col">Upstream</th>
                  <th scope="col">Principal</th>
                  <th scope="col">Connection</th>
                  <th scope="col">Request ID</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((entry) => (
                  <tr key={entry.request_id}>
                    <td className="nowrap">
                      {/* the day over the time: the list fits 1280 px */}
                      {formatTime(entry.at).slice(0, 10)}
                      <br />
                      {formatTime(entry.at).slice(11)}
                    </td>
                    <td className="wrap">
                      <code>{entry.method} {breakable(entry.route)}</code>
                    </td>
                    <td>
                      <span className={`status ${statusClass(entry.status)}`}>{entry.status}</span>
                    </td>
                    <td>{Math.round(entry.duration_ms)} ms</td>
                    <td>{entry.error_code ?? "—"}</td>
                    <td>{entry.upstream_calls}</td>
                    <td>
                      {entry.principal === null
                        ? "—"
                        : <code className="id" title={entry.principal}>{entry.principal}</code>}
                    </td>
                    <td>
                      {entry.connection_id === null ? "—" : (
                        <Link
                          to={`${BASE}/connections/${encodeURIComponent(entry.connection_id)}`}
                          aria-label={`Connection ${entry.connection_id}`}
                          title={entry.connection_id}
                          className="id"
                        >
                          {entry.connection_id}
                        </Link>
                      )}
                    </td>
                    <td>
                      <Link
                        to={`${BASE}/logs/${encodeURIComponent(entry.request_id)}`}
                        aria-label={`Request ${entry.request_id}: ${entry.method} ${entry.route} ${entry.status}`}
                        title={entry.request_id}
                        className="id"
                      >
                        {entry.request_id}
                      </Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
          <CursorPager pages={pages} next={list.data.next_cursor} />
        </>
      )}
    </Page>
  )
}

/** A stored body, pretty-printed when it is JSON (always shown as text). */
const Body = ({ text }: { readonly text: string | null }) => {
  if (text === null) return <p className="muted">None.</p>
  let shown = text
  try {
    shown = JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    // not JSON: as stored
  }
  return <pre className="body">{shown}</pre>
}

export const LogDetail = ({ requestId }: { readonly requestId: string }) => {
  const detail = useLoad(() => call((c) => c.logs.get({ path: { request_id: requestId } })), [requestId])
  const d = detail.data
  return (
    <Page title={`Request ${requestId}`}>
      <p>
        <Link to={`${BASE}/logs`}>Back to the logs</Link>
      </p>
      <ErrorText error={detail.error} />
      {d !== undefined && (
        <>
          <dl className="pairs">
            <dt>Time</dt>
            <dd>{formatTime(d.at)}</dd>
            <dt>Request</dt>
            <dd>
              <code>{d.method} {d.path}</code>
            </dd>
            <dt>Route</dt>
            <dd>
              <code>{d.route}</code>
            </dd>
            <dt>Status</dt>
            <dd>
              <span className={`status ${statusClass(d.status)}`}>{d.status}</span>
              {d.error_code !== null && ` · ${d.error_code}`}
            </dd>
            <dt>Duration</dt>
            <dd>{Math.round(d.duration_ms)} ms</dd>
            <dt>Principal</dt>
            <dd>{d.principal ?? "—"}</dd>
            <dt>Connection</dt>
            <dd>{d.connection_id ?? "—"}</dd>
          </dl>
          <h2>Request body{d.request_body_truncated ? " (truncated)" : ""}</h2>
          <Body text={d.request_body} />
          <h2>Error answer</h2>
          <Body text={d.error_body} />
          <h2>Upstream calls</h2>
          {d.upstream.length === 0 ?
            <p className="muted">This request made no call to a state system.</p> :
            (
              <Table label="Upstream calls">
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Provider</th>
                    <th scope="col">Call</th>
                    <th scope="col">Status</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Attempt</th>
                    <th scope="col">429</th>
                    <th scope="col">Provider error</th>
                  </tr>
                </thead>
                <tbody>
                  {d.upstream.map((u) => (
                    <tr key={u.n}>
                      <td>{u.n}</td>
                      <td>{u.provider} {u.state}</td>
                      <td>
                        <code>{u.method} {u.path}</code>
                        {u.operation !== null && <div className="muted">{u.operation}</div>}
                      </td>
                      <td>{u.status ?? u.failure ?? "—"}</td>
                      <td>{Math.round(u.duration_ms)} ms</td>
                      <td>{u.attempt}</td>
                      <td>{u.rate_limited ? "yes" : "no"}</td>
                      <td>{u.error_code ?? "—"}</td>
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
