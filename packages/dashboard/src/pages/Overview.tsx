/**
 * The Overview page, where the dashboard opens: the organisation's plan, its connections by
 * status, the last day's requests by status class with their error rate (5xx) and client error
 * rate (4xx) as percentages, and webhook deliveries by outcome, the webhook
 * backlog and the sync lag now (from `GET /dashboard/api/overview`), and the Issues feed (`GET /dashboard/api/issues`): what needs a
 * person, newest first, each with what to do (its message names the connection, facility or webhook).
 */
import { call } from "../Client.js"
import { ErrorText, formatTime, Page, Table, useLoad } from "../Ui.js"

const Figures = (
  { label, values }: {
    readonly label: string
    /** Each figure's name and value; `"wide"` gives it two of the row's four places (a percentage). */
    readonly values: ReadonlyArray<readonly [string, number | string, "wide"?]>
  }
) => (
  <section className="figures" aria-label={label}>
    <h2>{label}</h2>
    <dl>
      {values.map(([name, value, wide]) => (
        <div key={name} className={wide === undefined ? undefined : "wide"}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  </section>
)

/** A number of seconds as a person reads it: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`; `none` for null. */
export const formatSeconds = (seconds: number | null): string => {
  if (seconds === null) return "none"
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min`
  const hours = Math.floor(minutes / 60)
  if (hours < 24) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`
  const days = Math.floor(hours / 24)
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`
}

/**
 * A share from 0 to 1 as a percentage: `0%`, `1.25%`, `100%` (at most 2 places), `< 0.01%` for a
 * share too small to show but not none; `no requests` for null.
 */
export const formatRate = (rate: number | null): string => {
  if (rate === null) return "no requests"
  const percent = Math.round(rate * 10_000) / 100
  return percent === 0 && rate > 0 ? "< 0.01%" : `${percent}%`
}

export const Overview = () => {
  const overview = useLoad(() => call((c) => c.overview.get()), [])
  const issues = useLoad(() => call((c) => c.issues.list()), [])
  const o = overview.data
  return (
    <Page title="Overview">
      <ErrorText error={overview.error} />
      {o !== undefined && (
        <>
          <p>
            Plan: <strong>{o.plan}</strong>
          </p>
          <div className="figure-row">
            <Figures
              label="Connections"
              values={[
                ["active", o.connections.active],
                ["pending", o.connections.pending],
                ["error", o.connections.error],
                ["inactive", o.connections.inactive]
              ]}
            />
            <Figures
              label="Requests, last 24 hours"
              values={[
                ["all", o.requests_24h.total],
                ["2xx", o.requests_24h["2xx"]],
                ["4xx", o.requests_24h["4xx"]],
                ["5xx", o.requests_24h["5xx"]],
                ["error rate (5xx)", formatRate(o.requests_24h.error_rate), "wide"],
                ["client error rate (4xx)", formatRate(o.requests_24h.client_error_rate), "wide"]
              ]}
            />
            <Figures
              label="Webhook deliveries, last 24 hours"
              values={[
                ["succeeded", o.deliveries_24h.succeeded],
                ["retrying", o.deliveries_24h.retrying],
                ["failed", o.deliveries_24h.failed],
                ["pending", o.deliveries_24h.pending]
              ]}
            />
            <Figures
              label="Webhook backlog, now"
              values={[
                ["pending", o.webhook_backlog.pending],
                ["oldest pending", formatSeconds(o.webhook_backlog.oldest_pending_seconds)],
                ["dead-lettered", o.webhook_backlog.dead_lettered]
              ]}
            />
            <Figures
              label="Sync, now"
              values={[
                ["lag", formatSeconds(o.sync.lag_seconds)],
                ["live", o.sync.live],
                ["backfilling", o.sync.backfilling],
                ["failing", o.sync.failing]
              ]}
            />
          </div>
        </>
      )}
      <h2 id="issues-heading">Issues{o === undefined ? "" : ` (${o.open_issues})`}</h2>
      <ErrorText error={issues.error} />
      {issues.data !== undefined && issues.data.data.length === 0 && <p>Nothing needs you: no open issue.</p>}
      {issues.data !== undefined && issues.data.data.length > 0 && (
        <Table label="Issues">
          <thead>
            <tr>
              <th scope="col">Severity</th>
              <th scope="col">What</th>
              <th scope="col">What to do</th>
              <th scope="col">Since</th>
            </tr>
          </thead>
          <tbody>
            {issues.data.data.map((issue) => (
              <tr key={issue.id}>
                <td className={issue.severity === "critical" ? "status-error" : "status-warn"}>{issue.severity}</td>
                <td>{issue.message}</td>
                <td>{issue.action}</td>
                <td>{formatTime(issue.since)}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {issues.data?.truncated === true && <p className="muted">More than 100 issues: the newest 100 are listed.</p>}
    </Page>
  )
}
