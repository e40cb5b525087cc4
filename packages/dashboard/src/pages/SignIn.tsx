/**
 * Signing in (with the TOTP code when the API asks for it: 401 with `param: "totp_code"`), and
 * accepting an invitation (`/dashboard/accept?token=…`), which signs in.
 */
import { SSO_START_PATH } from "@tracebridge/api/DashboardApi"
import { useEffect, useRef, useState } from "react"
import type { Session } from "../Client.js"
import { call, Problem } from "../Client.js"
import { Link, navigate } from "../Router.js"
import { ErrorText, Page, useLoad } from "../Ui.js"

/** "Sign in with SSO": a plain link to the API, which redirects to the identity provider. */
const SsoLink = () => {
  const sso = useLoad(() => call((c) => c.session.sso(), { signingIn: true }), [])
  return sso.data?.enabled === true ?
    (
      <p className="sso">
        <a className="button" href={SSO_START_PATH}>Sign in with SSO</a>
      </p>
    ) :
    null
}

/**
 * Where the identity provider sends the browser back (`/dashboard/sso/callback?code=…&state=…`):
 * posts the answer to the API once, takes it out of the address, and signs in, or says why not in
 * the API's words.
 */
export const SsoCallback = (
  { onSignedIn, query }: { readonly query: string; readonly onSignedIn: (me: Session) => void }
) => {
  const [error, setError] = useState<unknown>()
  const sent = useRef(false)
  useEffect(() => {
    if (sent.current) return
    sent.current = true
    // the code is used once: out of the address and the history
    history.replaceState(null, "", location.pathname)
    call((c) => c.session.ssoCallback({ payload: { query } }), { signingIn: true }).then((me) => {
      onSignedIn(me)
      navigate("/dashboard/overview", true)
    }, setError)
  }, [query, onSignedIn])
  return (
    <Page title="Signing in with SSO">
      {error === undefined ? <p role="status">Checking the identity provider's answer…</p> : (
        <>
          <ErrorText error={error} />
          <p>
            <Link to="/dashboard">Back to sign-in</Link>
          </p>
        </>
      )}
    </Page>
  )
}

export const SignIn = ({ onSignedIn }: { readonly onSignedIn: (me: Session) => void }) => {
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [code, setCode] = useState("")
  const [askCode, setAskCode] = useState(false)
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  return (
    <Page title="Sign in">
      <form
        className="form narrow"
        onSubmit={(event) => {
          event.preventDefault()
          setBusy(true)
          setError(undefined)
          call(
            (c) =>
              c.session.signIn({
                payload: {
                  email: email.trim(),
                  password,
                  ...(askCode && code !== "" ? { totp_code: code.trim() } : {})
                }
              }),
            { signingIn: true }
          ).then(
            (me) => {
              setBusy(false)
              onSignedIn(me)
            },
            (e) => {
              setBusy(false)
              if (e instanceof Problem && e.param === "totp_code") {
                // the first time, the code is simply missing: ask for it without an error
                if (askCode) setError(e)
                setAskCode(true)
              } else setError(e)
            }
          )
        }}
      >
        <label htmlFor="signin-email">E-mail</label>
        <input
          id="signin-email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <label htmlFor="signin-password">Password</label>
        <input
          id="signin-password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {askCode && (
          <>
            <label htmlFor="signin-code">Code from your authenticator app</label>
            <input
              id="signin-code"
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="[0-9]{6}"
              required
              autoFocus
              value={code}
              onChange={(e) => setCode(e.target.value)}
            />
          </>
        )}
        <ErrorText error={error} />
        <button type="submit" className="primary" disabled={busy}>Sign in</button>
      </form>
      <SsoLink />
    </Page>
  )
}

export const Accept = (
  { onSignedIn, token }: { readonly token: string; readonly onSignedIn: (me: Session) => void }
) => {
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  return (
    <Page title="Accept an invitation">
      {token === "" ?
        (
          <p className="error" role="alert">
            This address has no invitation token. Open the whole link you were given.
          </p>
        ) :
        (
          <form
            className="form narrow"
            onSubmit={(event) => {
              event.preventDefault()
              if (password.length < 12) {
                setError(new Problem("The password must be at least 12 characters.", 400, undefined, "password"))
                return
              }
              setBusy(true)
              setError(undefined)
              call((c) => c.session.acceptInvitation({ payload: { token, email: email.trim(), password } }), {
                signingIn: true
              }).then((me) => {
                setBusy(false)
                onSignedIn(me)
              }, (e) => {
                setBusy(false)
                setError(e)
              })
            }}
          >
            <p>
              Choose the e-mail and password you will sign in with. If you already have an account, use its password.
            </p>
            <label htmlFor="accept-email">E-mail</label>
            <input
              id="accept-email"
              type="email"
              autoComplete="username"
              required
              value={email}
              onChange={(e) => setEmail(e.target.value)}
            />
            <label htmlFor="accept-password">Password (at least 12 characters)</label>
            <input
              id="accept-password"
              type="password"
              autoComplete="new-password"
              required
              minLength={12}
              aria-describedby="accept-password-hint"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
            <p id="accept-password-hint" className="muted">A long phrase is easiest to remember.</p>
            <ErrorText error={error} />
            <button type="submit" className="primary" disabled={busy}>Accept and sign in</button>
          </form>
        )}
    </Page>
  )
}
