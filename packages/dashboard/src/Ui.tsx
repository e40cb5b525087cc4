/**
 * The pages' small shared parts: a page frame with its heading, error text, a table that scrolls
 * inside its own box, a copy button, an inline confirmation, and times.
 */
import type { ReactNode } from "react"
import { useCallback, useEffect, useRef, useState } from "react"
import { Problem } from "./Client.js"

/** A page: sets the document's title and moves focus to the heading when the page opens. */
export const Page = (
  { actions, children, title }: { readonly title: string; readonly children: ReactNode; readonly actions?: ReactNode }
) => {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${title} · Tracebridge dashboard`
    heading.current?.focus()
  }, [title])
  return (
    <section className="page">
      <div className="page-head">
        <h1 ref={heading} tabIndex={-1}>{title}</h1>
        {actions}
      </div>
      {children}
    </section>
  )
}

/** The words of a failure (the API's `error.message`), announced to screen readers. */
export const ErrorText = ({ error }: { readonly error: unknown }) =>
  error === undefined || error === null ? null : (
    <p className="error" role="alert">
      {error instanceof Problem ? error.message : "Something went wrong. Reload the page and try again."}
    </p>
  )

/** A notice that something was done. */
export const Notice = ({ children }: { readonly children: ReactNode }) => (
  <p className="notice" role="status">{children}</p>
)

/** A table in a box of its own that scrolls sideways on a narrow screen (the page never does). */
export const Table = ({ children, label }: { readonly label: string; readonly children: ReactNode }) => (
  // a scrolling region must be reachable by keyboard
  <div className="table-box" role="region" aria-label={label} tabIndex={0}>
    <table>{children}</table>
  </div>
)

/** Copies `text`; says so. */
export const CopyButton = ({ label, text }: { readonly text: string; readonly label: string }) => {
  const [done, setDone] = useState<string | undefined>()
  return (
    <span className="copy">
      <button
        type="button"
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setDone("Copied."),
            () => setDone("Copying was refused: select the text and copy it.")
          )}
      >
        {label}
      </button>
      <span role="status" className="muted">{done}</span>
    </span>
  )
}

/**
 * A button that asks before it acts: the first press shows the question with a confirming button
 * (focused) and Cancel.
 */
export const Confirm = (
  { busy, confirmLabel, label, onConfirm, question }: {
    readonly label: string
    readonly question: string
    readonly confirmLabel: string
    readonly onConfirm: () => void
    readonly busy?: boolean
  }
) => {
  const [asking, setAsking] = useState(false)
  const yes = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (asking) yes.current?.focus()
  }, [asking])
  if (!asking) {
    return <button type="button" className="danger-outline" onClick={() => setAsking(true)}>{label}</button>
  }
  return (
    <span className="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        ref={yes}
        type="button"
        className="danger"
        disabled={busy}
        onClick={() => {
          setAsking(false)
          onConfirm()
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>Cancel</button>
    </span>
  )
}

const pad = (n: number) => String(n).padStart(2, "0")

/** A time as `2026-11-22 10:31 UTC` (the API's times are epoch milliseconds). */
export const formatTime = (ms: number | null | undefined): string => {
  if (ms === null || ms === undefined) return "—"
  const d = new Date(ms)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${
    pad(d.getUTCMinutes())
  } UTC`
}

/** Loads data with `load`, again whenever `deps` change or `reload()` is called. */
export function useLoad<A>(load: () => Promise<A>, deps: ReadonlyArray<unknown>) {
  const [data, setData] = useState<A | undefined>()
  const [error, setError] = useState<unknown>()
  const [loading, setLoading] = useState(true)
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let live = true
    setLoading(true)
    load().then(
      (value) => {
        if (!live) return
        setData(value)
        setError(undefined)
        setLoading(false)
      },
      (e) => {
        if (!live) return
        setError(e)
        setLoading(false)
      }
    )
    return () => {
      live = false
    }
  }, [...deps, tick])
  const reload = useCallback(() => setTick((n) => n + 1), [])
  return { data, error, loading, reload }
}

/**
 * The one time a webhook's signing secret is shown: it lives in the caller's state only, until
 * "I have copied it".
 */
export const SecretReveal = (
  { children, label, onDone, secret }: {
    readonly label: string
    readonly secret: string
    readonly onDone: () => void
    readonly children?: ReactNode
  }
) => {
  const done = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    done.current?.scrollIntoView({ block: "nearest" })
  }, [secret])
  return (
    <div className="reveal" role="region" aria-label="New secret">
      <h2>Copy the secret now</h2>
      <p>It is shown only this once.</p>
      <dl className="pairs">
        {children}
        <dt>{label}</dt>
        <dd>
          <code id="revealed-secret" className="wrap">{secret}</code>
        </dd>
      </dl>
      <p className="actions">
        <CopyButton text={secret} label="Copy secret" />
        <button ref={done} type="button" onClick={onDone}>I have copied it</button>
      </p>
    </div>
  )
}

const pad2 = (n: number) => String(n).padStart(2, "0")

/** Epoch milliseconds as a `datetime-local` value, in UTC (the pages show UTC). */
export const toUtcInput = (ms: number): string => {
  const d = new Date(ms)
  return `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}T${pad2(d.getUTCHours())}:${
    pad2(d.getUTCMinutes())
  }`
}

/** A `datetime-local` value read as UTC: epoch milliseconds, or undefined when empty or not a time. */
export const fromUtcInput = (value: string): number | undefined => {
  if (value.trim() === "") return undefined
  const ms = Date.parse(`${value.length === 16 ? `${value}:00` : value}Z`)
  return Number.isNaN(ms) ? undefined : ms
}
