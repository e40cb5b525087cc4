/**
 * The API Keys page (the spec's): the organisation's API clients; create one (its secret shown
 * once), roll a secret with an overlap the user picks (now up to 7 days), revoke one. A viewer sees
 * the list only, never a button that makes a secret.
 */
import type { ApiKeySecret } from "@tracebridge/api/DashboardApi"
import { useState } from "react"
import type { Session } from "../Client.js"
import { call } from "../Client.js"
import { Confirm, CopyButton, ErrorText, formatTime, Notice, Page, Table, useLoad } from "../Ui.js"

/** The overlaps a roll offers: how long the old secret keeps working. */
const overlaps = [
  { seconds: 0, label: "Stops now" },
  { seconds: 3_600, label: "1 hour" },
  { seconds: 86_400, label: "24 hours" },
  { seconds: 3 * 86_400, label: "3 days" },
  { seconds: 7 * 86_400, label: "7 days" }
] as const

/** The one time a secret is shown; it lives in this component's state only. */
const Revealed = ({ onDone, secret }: { readonly secret: typeof ApiKeySecret.Type; readonly onDone: () => void }) => (
  <div className="reveal" role="region" aria-label="New secret">
    <h2>Copy the secret now</h2>
    <p>It is shown only this once; Tracebridge keeps only its hash.</p>
    <dl className="pairs">
      <dt>Client ID</dt>
      <dd>
        <code>{secret.client_id}</code>
      </dd>
      <dt>Client secret</dt>
      <dd>
        <code id="revealed-secret">{secret.client_secret}</code>
      </dd>
      {secret.previous_secret_expires_at !== null && (
        <>
          <dt>Old secret works until</dt>
          <dd>{formatTime(secret.previous_secret_expires_at)}</dd>
        </>
      )}
    </dl>
    <p className="actions">
      <CopyButton text={secret.client_secret} label="Copy secret" />
      <button type="button" onClick={onDone}>I have copied it</button>
    </p>
  </div>
)

const Roll = (
  { clientId, onRolled }: { readonly clientId: string; readonly onRolled: (s: typeof ApiKeySecret.Type) => void }
) => {
  const [open, setOpen] = useState(false)
  const [seconds, setSeconds] = useState(86_400)
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  if (!open) return <button type="button" onClick={() => setOpen(true)}>Roll…</button>
  const id = `roll-${clientId}`
  return (
    <form
      className="inline-form"
      aria-label={`Roll the secret of ${clientId}`}
      onSubmit={(event) => {
        event.preventDefault()
        setBusy(true)
        call((c) => c.keys.roll({ path: { client_id: clientId }, payload: { expires_in_seconds: seconds } })).then(
          (secret) => {
            setBusy(false)
            setOpen(false)
            onRolled(secret)
          },
          (e) => {
            setBusy(false)
            setError(e)
          }
        )
      }}
    >
      <label htmlFor={id}>Old secret keeps working</label>
      <select id={id} value={seconds} onChange={(e) => setSeconds(Number(e.target.value))}>
        {overlaps.map((o) => <option key={o.seconds} value={o.seconds}>{o.label}</option>)}
      </select>
      <button type="submit" className="primary" disabled={busy}>Roll secret</button>
      <button type="button" onClick={() => setOpen(false)}>Cancel</button>
      <ErrorText error={error} />
    </form>
  )
}

export const Keys = ({ me }: { readonly me: Session }) => {
  const keys = useLoad(() => call((c) => c.keys.list()), [])
  const [secret, setSecret] = useState<typeof ApiKeySecret.Type | undefined>()
  const [error, setError] = useState<unknown>()
  const [notice, setNotice] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const canManage = me.role !== "viewer"

  const create = () => {
    setBusy(true)
    setError(undefined)
    setNotice(undefined)
    call((c) => c.keys.create()).then((made) => {
      setBusy(false)
      setSecret(made)
      keys.reload()
    }, (e) => {
      setBusy(false)
      setError(e)
    })
  }
  const revoke = (clientId: string) => {
    setError(undefined)
    setNotice(undefined)
    call((c) => c.keys.revoke({ path: { client_id: clientId } })).then(() => {
      setNotice(`${clientId} is revoked: its secret and tokens no longer work.`)
      keys.reload()
    }, setError)
  }

  return (
    <Page
      title="API keys"
      actions={canManage && (
        <button type="button" className="primary" onClick={create} disabled={busy}>Create API key</button>
      )}
    >
      <p className="muted">
        Each API client gets access tokens at <code>POST /v1/oauth/token</code> with its ID and secret.
        {canManage ? "" : " Your role (viewer) can read this list; a developer or above makes and changes keys."}
      </p>
      {secret !== undefined && <Revealed secret={secret} onDone={() => setSecret(undefined)} />}
      {notice !== undefined && <Notice>{notice}</Notice>}
      <ErrorText error={error ?? keys.error} />
      {keys.data !== undefined && (
        keys.data.data.length === 0 ? <p>No API keys yet.</p> : (
          <Table label="API keys">
            <thead>
              <tr>
                <th scope="col">Client ID</th>
                <th scope="col">Created</th>
                <th scope="col">By</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                {canManage && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {keys.data.data.map((key) => (
                <tr key={key.client_id}>
                  <td>
                    <code>{key.client_id}</code>
                  </td>
                  <td>{formatTime(key.created_at)}</td>
                  <td>{key.created_by ?? "operator"}</td>
                  <td>{key.last_used_at === null ? "never" : formatTime(key.last_used_at)}</td>
                  <td>
                    {key.revoked_at !== null
                      ? `Revoked ${formatTime(key.revoked_at)}`
                      : key.previous_secret_expires_at !== null
                      ? `Active; old secret until ${formatTime(key.previous_secret_expires_at)}`
                      : "Active"}
                  </td>
                  {canManage && (
                    <td className="row-actions">
                      {key.revoked_at === null && (
                        <>
                          <Roll
                            clientId={key.client_id}
                            onRolled={(s) => {
                              setSecret(s)
                              keys.reload()
                            }}
                          />
                          <Confirm
                            label="Revoke"
                            question={`Revoke ${key.client_id}? Its tokens stop working at once.`}
                            confirmLabel="Yes, revoke"
                            onConfirm={() => revoke(key.client_id)}
                          />
                        </>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </Table>
        )
      )}
    </Page>
  )
}
