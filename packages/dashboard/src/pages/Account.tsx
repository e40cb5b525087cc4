/**
 * The Account page: the signed-in user's second factor (TOTP). Enrolling shows the `otpauth://`
 * URI as a QR code drawn here (the `qrcode` package; nothing leaves the page) and as text; a code
 * from the app confirms it; a current code turns it off.
 */
import type { TotpEnrolment } from "@tracebridge/api/DashboardApi"
import QRCode from "qrcode"
import { useEffect, useState } from "react"
import type { Session } from "../Client.js"
import { call } from "../Client.js"
import { ErrorText, Notice, Page } from "../Ui.js"

const CodeForm = (
  { busy, id, label, onSubmit }: {
    readonly id: string
    readonly label: string
    readonly busy: boolean
    readonly onSubmit: (code: string) => void
  }
) => {
  const [code, setCode] = useState("")
  return (
    <form
      className="form row"
      onSubmit={(event) => {
        event.preventDefault()
        onSubmit(code.trim())
      }}
    >
      <div className="field">
        <label htmlFor={id}>Code from your authenticator app</label>
        <input
          id={id}
          inputMode="numeric"
          autoComplete="one-time-code"
          pattern="[0-9]{6}"
          required
          value={code}
          onChange={(e) => setCode(e.target.value)}
        />
      </div>
      <button type="submit" className="primary" disabled={busy}>{label}</button>
    </form>
  )
}

const Qr = ({ uri }: { readonly uri: string }) => {
  const [src, setSrc] = useState<string | undefined>()
  useEffect(() => {
    let live = true
    QRCode.toDataURL(uri, { margin: 2, width: 220 }).then((url) => live && setSrc(url), () => live && setSrc(undefined))
    return () => {
      live = false
    }
  }, [uri])
  return src === undefined ?
    null :
    <img className="qr" src={src} width={220} height={220} alt="QR code of the authenticator link shown below" />
}

export const Account = ({ me, onChange }: { readonly me: Session; readonly onChange: (me: Session) => void }) => {
  const [enrolment, setEnrolment] = useState<typeof TotpEnrolment.Type | undefined>()
  const [error, setError] = useState<unknown>()
  const [notice, setNotice] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)

  function run<A>(f: () => Promise<A>, then: (a: A) => void) {
    setBusy(true)
    setError(undefined)
    setNotice(undefined)
    f().then((a) => {
      setBusy(false)
      then(a)
    }, (e) => {
      setBusy(false)
      setError(e)
    })
  }
  const refresh = (words: string) =>
    call((c) => c.session.me()).then((m) => {
      onChange(m)
      setNotice(words)
    })

  return (
    <Page title="Account">
      <dl className="pairs">
        <dt>E-mail</dt>
        <dd>{me.user.email}</dd>
        <dt>Organisation</dt>
        <dd>{me.organisation.name} ({me.organisation.plan})</dd>
        <dt>Role</dt>
        <dd>{me.role}</dd>
      </dl>
      <h2>Two-factor sign-in</h2>
      {notice !== undefined && <Notice>{notice}</Notice>}
      <ErrorText error={error} />
      {me.user.totp_enabled ?
        (
          <>
            <p>Two-factor sign-in is on: signing in asks for a code from your authenticator app.</p>
            <CodeForm
              id="totp-disable"
              label="Turn off two-factor"
              busy={busy}
              onSubmit={(code) =>
                run(() => call((c) => c.totp.disable({ payload: { code } })), () =>
                  refresh("Two-factor sign-in is off."))}
            />
          </>
        ) :
        enrolment === undefined ?
        (
          <>
            <p>Two-factor sign-in is off. Turn it on with any authenticator app (TOTP).</p>
            <button
              type="button"
              className="primary"
              disabled={busy}
              onClick={() =>
                run(() => call((c) => c.totp.enrol()), setEnrolment)}
            >
              Set up two-factor
            </button>
          </>
        ) :
        (
          <>
            <p>Scan this code with your authenticator app, or enter the link or key below in it by hand.</p>
            <Qr uri={enrolment.otpauth_uri} />
            <p>
              <code className="wrap">{enrolment.otpauth_uri}</code>
            </p>
            <p>
              Key: <code className="wrap">{enrolment.secret}</code>
            </p>
            <CodeForm
              id="totp-confirm"
              label="Turn on two-factor"
              busy={busy}
              onSubmit={(code) =>
                run(() => call((c) => c.totp.confirm({ payload: { code } })), () => {
                  setEnrolment(undefined)
                  return refresh("Two-factor sign-in is on.")
                })}
            />
          </>
        )}
    </Page>
  )
}
