/**
 * The dashboard's frame: who is signed in (read from `GET /dashboard/api/session` at start), the
 * navigation, and the page of the current route.
 */
import { useCallback, useEffect, useState } from "react"
import type { Session } from "./Client.js"
import { call, setCsrf, whenSignedOut } from "./Client.js"
import { Account } from "./pages/Account.js"
import { Connection } from "./pages/Connection.js"
import { Connections } from "./pages/Connections.js"
import { Keys } from "./pages/Keys.js"
import { LogDetail, Logs } from "./pages/Logs.js"
import { Overview } from "./pages/Overview.js"
import { Accept, SignIn } from "./pages/SignIn.js"
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
  { path: `${BASE}/team`, label: "Team" },
  { path: `${BASE}/account`, label: "Account" }
] as const

const Header = (
  { me, onSignOut, path }: { readonly me: Session | null; readonly path: string; readonly onSignOut: () => void }
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
    </div>
    {me !== null && (
      <nav aria-label="Dashboard">
        <ul>
          {sections.map((s) => (
            <li key={s.path}>
              <Link to={s.path} aria-current={path.startsWith(s.path) ? "page" : undefined}>{s.label}</Link>
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
    call((c) => c.session.me(), { signingIn: true }).then(signedIn, () => setMe(null))
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
  if (path === `${BASE}/accept`) {
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
      <Header me={me ?? null} path={path} onSignOut={signOut} />
      <main id="main">
        <ErrorText error={signOutError} />
        {body}
      </main>
    </>
  )
}
