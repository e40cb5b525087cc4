/**
 * Client-side routes under `/dashboard/` with the History API: the server answers the same
 * `index.html` for every such path, and this picks the page.
 */
import type { AnchorHTMLAttributes, MouseEvent, ReactNode } from "react"
import { useEffect, useState } from "react"

export const BASE = "/dashboard"

export interface Location {
  readonly path: string
  readonly search: URLSearchParams
}

const read = (): Location => ({
  path: location.pathname.replace(/\/+$/, "") || BASE,
  search: new URLSearchParams(location.search)
})

const listeners = new Set<() => void>()

/** Goes to `to` (a path under /dashboard) without reloading; `replace` keeps history as it is. */
export const navigate = (to: string, replace = false): void => {
  if (replace) history.replaceState(null, "", to)
  else history.pushState(null, "", to)
  for (const listener of listeners) listener()
}

/** The current location; re-renders on navigation and on Back/Forward. */
export const useLocation = (): Location => {
  const [current, setCurrent] = useState(read)
  useEffect(() => {
    const update = () => setCurrent(read())
    listeners.add(update)
    addEventListener("popstate", update)
    return () => {
      listeners.delete(update)
      removeEventListener("popstate", update)
    }
  }, [])
  return current
}

/** A link that navigates in the page (a modified click still opens a new tab). */
export const Link = (
  { children, to, ...rest }:
    & { readonly to: string; readonly children: ReactNode }
    & AnchorHTMLAttributes<
      HTMLAnchorElement
    >
) => (
  <a
    {...rest}
    href={to}
    onClick={(event: MouseEvent<HTMLAnchorElement>) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
      event.preventDefault()
      navigate(to)
    }}
  >
    {children}
  </a>
)
