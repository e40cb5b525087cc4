/**
 * The dashboard's frame: who is signed in (read from `GET /dashboard/api/session` at start), the
 * navigation, and the page of the current route.
 */
import { useCallback, useEffect, useState } from "react"
import type { Session } from "./Client.js"
import { call, setCsrf, whenSignedOut } from "./Client.js"
import { Account } from "./pages/Account.js"
import { Connect } from "./pages/Connect.js"
import { Connection } from "./pages/Connection.js"
import { Connections } from "./pages/Connections.js"
import { Keys } from "./pages/Keys.js"
import { LogDetail, Logs } from "./pages/Logs.js"
import { Overview } from "./pages/Overview.js"
import { Sandbox } from "./pages/Sandbox.js"
import { Accept, SignIn, SsoCallback } from "./pages/SignIn.js"
import { Team } from "./pages/Team.js"
import { Webhooks } from "./pages/Webhooks.js"
import { BASE, Link, navigate, useLocation } from "./Router.js"
import { ErrorText, Page } from "./Ui.js"

const sections = [
  { path: `${BASE}/overview`, label: "Overview" },
  { path: `${BASE}/keys`, label: "API keys" },
  { path: `${BASE}/connections`, label: "Connections" },
  { path: `${BASE}/webhooks`, label: "Webhooks" },
  { path: `${BASE}/logs`, label: "Logs" },
  { path: `${BASE}/connect`, label: "Connect" },
  { path: `${BASE}/sandbox`, label: "Sandbox" },
  { path: `${BASE}/team`, label: "Team" },
  { path: `${BASE}/account`, label: "Account" }
] as const

/** The organisation switch: shown when the user is a member of more than one. */
const OrganisationSwitch = (
  { me, onSwitched }: { readonly me: Session; readonly onSwitched: (me: Session) => void }
) => {
  const [chosen, setChosen] = useState(me.organisation.id)
  const [error, setError] = useState<unknown>()
  if (me.organisations.length < 2) return null
  return (
    <form
      className="switch"
      aria-label="Switch organisation"
      onSubmit={(event) => {
        event.preventDefault()
        setError(undefined)
        call((c) => c.session.switchOrganisation({ payload: { organisation_id: chosen } })).then((switched) => {
          onSwitched(switched)
          navigate(`${BASE}/overview`, true)
        }, setError)
      }}
    >
      <label htmlFor="organisation-switch">Organisation</label>
      <select id="organisation-switch" value={chosen} onChange={(e) => setChosen(e.target.value)}>
        {me.organisations.map((o) => <option key={o.id} value={o.id}>{o.name} ({o.role})</option>)}
      </select>
      <button type="submit" disabled={chosen === me.organisation.id}>Switch</button>
      <ErrorText error={error} />
    </form>
  )
}

const Header = (
  { me, onSignOut, onSwitched, path }: {
    readonly me: Session | null
    readonly path: string
    readonly onSignOut: () => void
    readonly onSwitched: (me: Session) => void
  }
) => (
  <header className="top">
    <div className="brand">
      <a className="skip" href="#main">Skip to content</a>
      <span className="name">Tracebridge</span>
      {me !== null && (
        <span className="who">
          {me.organisation.name} · {me.user.email} ({me.role})
        </span>
      )}
      {me !== null && <OrganisationSwitch key={me.organisation.id} me={me} onSwitched={onSwitched} />}
    </div>
    {me !== null && (
      <nav aria-label="Dashboard">
        <ul>
          {sections.map((s) => (
            <li key={s.path}>
              <Link to={s.path} aria-current={path === s.path || path.startsWith(`${s.path}/`) ? "page" : undefined}>
                {s.label}
              </Link>
            </li>
          ))}
          <li>
            <button type="button" className="link" onClick={onSignOut}>Sign out</button>
          </li>
        </ul>
      </nav>
    )}
  </header>
)

export const App = () => {
  const { path, search } = useLocation()
  // undefined while the session is read; null when signed out
  const [me, setMe] = useState<Session | null | undefined>(undefined)
  const [signOutError, setSignOutError] = useState<unknown>()

  const signedIn = useCallback((session: Session) => {
    setCsrf(session.csrf_token)
    setMe(session)
  }, [])

  useEffect(() => {
    whenSignedOut(() => setMe(null))
    // the SSO callback page signs in itself: a "not signed in" read must not overwrite its answer
    if (location.pathname.startsWith(`${BASE}/sso/callback`)) setMe(null)
    else call((c) => c.session.me(), { signingIn: true }).then(signedIn, () => setMe(null))
  }, [signedIn])

  const signOut = () => {
    setSignOutError(undefined)
    call((c) => c.session.signOut()).then(() => {
      setCsrf(undefined)
      setMe(null)
      navigate(BASE, true)
    }, setSignOutError)
  }

  let body
  if (path === `${BASE}/sso/callback`) {
    body = <SsoCallback query={search.toString()} onSignedIn={signedIn} />
  } else if (path === `${BASE}/accept`) {
    body = (
      <Accept
        token={search.get("token") ?? ""}
        onSignedIn={(session) => {
          signedIn(session)
          navigate(`${BASE}/keys`, true)
        }}
      />
    )
  } else if (me === undefined) {
    body = <p role="status">Loading…</p>
  } else if (me === null) {
    body = <SignIn onSignedIn={signedIn} />
  } else if (path === BASE || path === `${BASE}/signin` || path === `${BASE}/overview`) {
    body = <Overview />
  } else if (path === `${BASE}/keys`) {
    body = <Keys me={me} />
  } else if (path === `${BASE}/team`) {
    body = <Team me={me} />
  } else if (path === `${BASE}/connections`) {
    body = <Connections me={me} />
  } else if (path.startsWith(`${BASE}/connections/`)) {
    body = <Connection me={me} connectionId={decodeURIComponent(path.slice(`${BASE}/connections/`.length))} />
  } else if (path === `${BASE}/webhooks`) {
    body = <Webhooks me={me} />
  } else if (path === `${BASE}/logs`) {
    body = <Logs />
  } else if (path.startsWith(`${BASE}/logs/`)) {
    body = <LogDetail requestId={decodeURIComponent(path.slice(`${BASE}/logs/`.length))} />
  } else if (path === `${BASE}/connect`) {
    body = <Connect me={me} />
  } else if (path === `${BASE}/sandbox`) {
    body = <Sandbox me={me} />
  } else if (path === `${BASE}/account`) {
    body = <Account me={me} onChange={signedIn} />
  } else {
    body = (
      <Page title="Page not found">
        <p>
          There is no dashboard page at this address. <Link to={`${BASE}/keys`}>Go to the API keys</Link>.
        </p>
      </Page>
    )
  }

  return (
    <>
      <Header me={me ?? null} path={path} onSignOut={signOut} onSwitched={signedIn} />
      <main id="main">
        <ErrorText error={signOutError} />
        {body}
      </main>
    </>
  )
}
