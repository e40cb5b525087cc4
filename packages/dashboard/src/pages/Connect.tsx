/**
 * The Connect page: the organisation's Connect defaults, the name and logo the widget shows when a
 * link token names none (`GET`/`PUT /dashboard/api/connect/settings`; admin and up change them),
 * and a preview: the real widget, opened in a frame with a sandbox link token made with them
 * (`POST /dashboard/api/connect/preview`, developer and up).
 */
import { ConnectSettingsUpdate } from "@tracebridge/api/DashboardApi"
import { Either, ParseResult, Schema } from "effect"
import { useState } from "react"
import type { Session } from "../Client.js"
import { call, Problem } from "../Client.js"
import { ErrorText, formatTime, Notice, Page, useLoad } from "../Ui.js"

type Update = typeof ConnectSettingsUpdate.Type
const decode = Schema.decodeUnknownEither(ConnectSettingsUpdate)

/**
 * The form as the API's body (an empty field clears the default), or a Problem in the API's words
 * (the contract's own messages, which the API answers too) naming the field.
 */
const updateOf = (name: string, logo: string): Update | Problem => {
  const decoded = decode({ client_name: name === "" ? null : name, logo_url: logo.trim() === "" ? null : logo.trim() })
  if (Either.isRight(decoded)) return decoded.right
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
  const param = String(issue?.path[0] ?? "")
  const message = issue?.message !== undefined && issue.message.startsWith(param) && param !== ""
    ? issue.message
    : `${param || "A value"} is not valid`
  return new Problem(message, 400, "invalid_parameter", param)
}

const canChange = (me: Session) => me.role === "owner" || me.role === "admin"

export const Connect = ({ me }: { readonly me: Session }) => {
  const settings = useLoad(() => call((c) => c.connect.settings()), [])
  const [name, setName] = useState<string | undefined>()
  const [logo, setLogo] = useState<string | undefined>()
  const [error, setError] = useState<unknown>()
  const [notice, setNotice] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const [preview, setPreview] = useState<{ readonly url: string; readonly expires_at: number } | undefined>()
  const [previewError, setPreviewError] = useState<unknown>()
  const s = settings.data
  const nameValue = name ?? s?.client_name ?? ""
  const logoValue = logo ?? s?.logo_url ?? ""

  const openPreview = () => {
    setPreviewError(undefined)
    call((c) => c.connect.preview()).then(
      (made) => setPreview({ url: made.url, expires_at: made.expires_at }),
      setPreviewError
    )
  }

  const save = () => {
    setError(undefined)
    setNotice(undefined)
    const update = updateOf(nameValue, logoValue)
    if (update instanceof Problem) {
      setError(update)
      return
    }
    setBusy(true)
    call((c) => c.connect.update({ payload: update })).then(() => {
      setBusy(false)
      setName(undefined)
      setLogo(undefined)
      setNotice("Saved. New link tokens that name no client_name or logo_url show these.")
      settings.reload()
      // the preview shows what a new link token shows: open it again with the new defaults
      if (preview !== undefined) openPreview()
    }, (e) => {
      setBusy(false)
      setError(e)
    })
  }

  return (
    <Page title="Connect">
      <p className="muted">
        What the Connect widget shows when <code>POST /v1/link/token/create</code> names no <code>client_name</code> or
        {" "}
        <code>logo_url</code> of its own. A link token's own values always win.
      </p>
      <ErrorText error={settings.error} />
      <div className="connect-layout">
        <div>
          {s !== undefined && (
            canChange(me)
              ? (
                <form
                  className="form narrow"
                  aria-label="Connect settings"
                  onSubmit={(event) => {
                    event.preventDefault()
                    save()
                  }}
                >
                  <label htmlFor="connect-name">Name shown in Connect</label>
                  <input
                    id="connect-name"
                    value={nameValue}
                    maxLength={200}
                    aria-describedby="connect-name-hint"
                    onChange={(e) => setName(e.target.value)}
                  />
                  <span id="connect-name-hint" className="muted">
                    1 to 64 characters. Empty: your organisation's name ({s.organisation_name}).
                  </span>
                  <label htmlFor="connect-logo">Logo URL</label>
                  <input
                    id="connect-logo"
                    type="url"
                    inputMode="url"
                    value={logoValue}
                    placeholder="https://…"
                    aria-describedby="connect-logo-hint"
                    onChange={(e) => setLogo(e.target.value)}
                  />
                  <span id="connect-logo-hint" className="muted">An https address. Empty: no logo.</span>
                  <ErrorText error={error} />
                  <button type="submit" className="primary" disabled={busy}>Save</button>
                </form>
              )
              : (
                <>
                  <dl className="pairs">
                    <dt>Name shown in Connect</dt>
                    <dd>{s.client_name ?? `${s.organisation_name} (the organisation's name)`}</dd>
                    <dt>Logo URL</dt>
                    <dd>{s.logo_url === null ? "none" : <code>{s.logo_url}</code>}</dd>
                  </dl>
                  <p className="muted">Admins and owners change these.</p>
                </>
              )
          )}
          {s !== undefined && <p className="muted">Last changed: {formatTime(s.updated_at)}</p>}
          {notice !== undefined && <Notice>{notice}</Notice>}
        </div>

        <div>
          <h2>Preview</h2>
          {me.role === "viewer"
            ? <p className="muted">Developers, admins and owners open the preview (it makes a sandbox link token).</p>
            : (
              <>
                <p className="muted">
                  The real widget, with a sandbox link token made for this organisation. Linking in it makes a sandbox
                  connection.
                </p>
                <div className="actions">
                  <button type="button" onClick={openPreview}>
                    {preview === undefined ? "Open preview" : "Reload preview"}
                  </button>
                  {preview !== undefined && (
                    <a href={preview.url} target="_blank" rel="noopener noreferrer">Open in a new window</a>
                  )}
                </div>
                <ErrorText error={previewError} />
                {preview !== undefined && (
                  <>
                    <p className="muted">The link token works until {formatTime(preview.expires_at)}.</p>
                    <iframe className="connect-frame" title="Connect preview" src={preview.url} />
                  </>
                )}
              </>
            )}
        </div>
      </div>
    </Page>
  )
}
