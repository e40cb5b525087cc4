/**
 * The Connections page: the organisation's connections, filtered by status, provider, state and
 * `external_id` (shown as text, whatever it holds), paged, each linked to its page; deleting one
 * (developer and up) after a confirmation.
 */
import { ConnectionsQuery } from "@tracebridge/api/DashboardApi"
import { Schema } from "effect"
import { useState } from "react"
import type { Session } from "../Client.js"
import { call, Problem } from "../Client.js"
import { BASE, Link } from "../Router.js"
import type { FilterField } from "../Ui.js"
import { Confirm, ErrorText, FilterForm, formatTime, Notice, Page, Pager, Table, useFilters, useLoad } from "../Ui.js"

type Query = typeof ConnectionsQuery.Type
const statuses = ConnectionsQuery.fields.status.from.literals
const states = ConnectionsQuery.fields.state.from.literals
const isProvider = Schema.is(ConnectionsQuery.fields.provider.from)

interface Filters {
  readonly status: string
  readonly provider: string
  readonly state: string
  readonly external_id: string
}
const none: Filters = { status: "", provider: "", state: "", external_id: "" }

const fields: ReadonlyArray<FilterField<keyof Filters>> = [
  { name: "status", id: "f-status", label: "Status", options: statuses },
  { name: "provider", id: "f-provider", label: "Provider", placeholder: "provider_a" },
  { name: "state", id: "f-state", label: "State", options: states },
  { name: "external_id", id: "f-external", label: "External ID" }
]

/** The filters as the API's query, or a Problem naming the field that is not right. */
const queryOf = (f: Filters, page: number): Query | Problem => {
  const provider = f.provider.trim()
  if (provider !== "" && !isProvider(provider)) {
    return new Problem(
      "A provider name is provider_ followed by lower-case letters, digits or _ (for example provider_a).",
      400,
      undefined,
      "provider"
    )
  }
  return {
    ...(f.status === "" ? {} : { status: f.status as NonNullable<Query["status"]> }),
    ...(provider === "" ? {} : { provider }),
    ...(f.state === "" ? {} : { state: f.state as NonNullable<Query["state"]> }),
    ...(f.external_id.trim() === "" ? {} : { external_id: f.external_id.trim() }),
    page,
    per_page: 25
  }
}

export const Connections = ({ me }: { readonly me: Session }) => {
  const filters = useFilters(none)
  const [page, setPage] = useState(1)
  const [error, setError] = useState<unknown>()
  const [notice, setNotice] = useState<string | undefined>()
  const list = useLoad(() => {
    const query = queryOf(filters.applied, page)
    return query instanceof Problem ? Promise.reject(query) : call((c) => c.connections.list({ urlParams: query }))
  }, [filters.applied, page])
  const canDelete = me.role !== "viewer"

  const remove = (id: string) => {
    setError(undefined)
    call((c) => c.connections.remove({ path: { connection_id: id } })).then((c) => {
      setNotice(`${c.id} was deleted (now ${c.status}); its stored login is erased.`)
      list.reload()
    }, setError)
  }

  return (
    <Page title="Connections">
      <FilterForm
        label="Filter connections"
        fields={fields}
        filters={filters}
        onFilter={() => {
          setNotice(undefined)
          setPage(1)
          list.reload()
        }}
        onClear={() => setPage(1)}
      />
      {notice !== undefined && <Notice>{notice}</Notice>}
      <ErrorText error={error ?? list.error} />
      {list.data !== undefined && (
        <>
          <p className="muted" role="status">
            {list.data.total === 0
              ? "No connections match."
              : `${list.data.total} connection${list.data.total === 1 ? "" : "s"}.`}
          </p>
          {list.data.data.length > 0 && (
            <Table label="Connections">
              <thead>
                <tr>
                  <th scope="col">Connection</th>
                  <th scope="col">External ID</th>
                  <th scope="col">Provider</th>
                  <th scope="col">State</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                  <th scope="col">Updated</th>
                  {canDelete && <th scope="col">Actions</th>}
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((c) => (
                  <tr key={c.id}>
                    <td>
                      <Link to={`${BASE}/connections/${encodeURIComponent(c.id)}`} aria-label={`Connection ${c.id}`}>
                        <code>{c.id}</code>
                      </Link>
                      {c.is_sandbox ? <span className="tag">sandbox</span> : null}
                    </td>
                    <td>{c.external_id ?? "—"}</td>
                    <td>{c.provider}</td>
                    <td>{c.state}</td>
                    <td>
                      <span className={`status status-${c.status}`}>{c.status}</span>
                    </td>
                    <td>{formatTime(c.created_at)}</td>
                    <td>{formatTime(c.updated_at)}</td>
                    {canDelete && (
                      <td className="row-actions">
                        {c.status !== "inactive" && (
                          <Confirm
                            label="Delete"
                            question={`Delete ${c.id}? Its login is erased and its tokens revoked.`}
                            confirmLabel="Yes, delete"
                            onConfirm={() => remove(c.id)}
                          />
                        )}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
          <Pager
            backLabel="Previous"
            forwardLabel="Next"
            onBack={page <= 1 ? undefined : () => setPage(page - 1)}
            onForward={list.data.has_more ? () => setPage(page + 1) : undefined}
            between={<span>Page {page}</span>}
          />
        </>
      )}
    </Page>
  )
}
