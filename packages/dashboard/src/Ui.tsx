/**
 * The pages' small shared parts: a page frame with its heading, error text, a table that scrolls
 * inside its own box, a copy button, an inline confirmation, times, and the lists' filter forms
 * and pagers.
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

/**
 * A filter form's state: `draft` (what the fields hold) and `applied` (what the list is filtered
 * by, from the last Filter or Clear).
 */
export function useFilters<F extends Readonly<Record<keyof F, string>>>(none: F) {
  const [draft, setDraft] = useState<F>(none)
  const [applied, setApplied] = useState<F>(none)
  return {
    draft,
    applied,
    /** Puts a field's new value in the draft. */
    set: (name: keyof F, value: string) => setDraft({ ...draft, [name]: value }),
    /** Filters by the draft. */
    apply: () => setApplied(draft),
    /** Empties the fields and filters by nothing. */
    clear: () => {
      setDraft(none)
      setApplied(none)
    },
    /** Fills the fields with `filters` and filters by them. */
    replace: (filters: F) => {
      setDraft(filters)
      setApplied(filters)
    }
  }
}

export type Filters<F extends Readonly<Record<keyof F, string>>> = ReturnType<typeof useFilters<F>>

/**
 * One field of a filter form: a select (`options`, each a value or a `[value, label]` pair, after
 * `any`, the empty value's label, "Any" unless told) or an input (text unless told).
 */
export type FilterField<K extends string> =
  & {
    readonly name: K
    readonly id: string
    readonly label: string
  }
  & (
    | { readonly options: ReadonlyArray<string | readonly [value: string, label: string]>; readonly any?: string }
    | { readonly type?: "text" | "datetime-local"; readonly placeholder?: string }
  )

/**
 * A list's filter form: its fields, then **Filter** (filters by what they hold) and **Clear**
 * (empties them). `onFilter` and `onClear` are for what the page does besides, such as going back
 * to the first page.
 */
export const FilterForm = <F extends Readonly<Record<keyof F, string>>>(
  { fields, filters, label, onClear, onFilter }: {
    readonly label: string
    readonly fields: ReadonlyArray<FilterField<keyof F & string>>
    readonly filters: Filters<F>
    readonly onFilter: () => void
    readonly onClear: () => void
  }
) => (
  <form
    className="form filters"
    aria-label={label}
    onSubmit={(event) => {
      event.preventDefault()
      filters.apply()
      onFilter()
    }}
  >
    {fields.map((field) => {
      const value = filters.draft[field.name] ?? ""
      const onChange = (e: { target: { value: string } }) => filters.set(field.name, e.target.value)
      return (
        <div className="field" key={field.name}>
          <label htmlFor={field.id}>{field.label}</label>
          {"options" in field
            ? (
              <select id={field.id} value={value} onChange={onChange}>
                <option value="">{field.any ?? "Any"}</option>
                {field.options.map((option) => {
                  const [optionValue, optionLabel] = typeof option === "string" ? [option, option] : option
                  return <option key={optionValue} value={optionValue}>{optionLabel}</option>
                })}
              </select>
            )
            : (
              <input
                id={field.id}
                value={value}
                onChange={onChange}
                {...(field.type === undefined ? {} : { type: field.type })}
                {...(field.placeholder === undefined ? {} : { placeholder: field.placeholder })}
              />
            )}
        </div>
      )
    })}
    <div className="field buttons">
      <button type="submit" className="primary">Filter</button>
      <button
        type="button"
        onClick={() => {
          filters.clear()
          onClear()
        }}
      >
        Clear
      </button>
    </div>
  </form>
)

/**
 * A list's pager: a button back and a button forward, each disabled where there is no such page
 * (its action undefined), with `between` between them and `children` after.
 */
export const Pager = (
  { backLabel, between, children, forwardLabel, onBack, onForward }: {
    readonly backLabel: string
    readonly forwardLabel: string
    readonly onBack: (() => void) | undefined
    readonly onForward: (() => void) | undefined
    readonly between?: ReactNode
    readonly children?: ReactNode
  }
) => (
  <p className="pager">
    <button type="button" disabled={onBack === undefined} onClick={onBack}>{backLabel}</button>
    {between}
    <button type="button" disabled={onForward === undefined} onClick={onForward}>{forwardLabel}</button>
    {children}
  </p>
)

/** Paging by the API's cursors, newest first: the cursor of the page shown, and the way back. */
export function useCursorPages() {
  // the cursors of the pages before this one and of this one (the first page has none)
  const [cursors, setCursors] = useState<ReadonlyArray<string | undefined>>([undefined])
  return {
    cursor: cursors[cursors.length - 1],
    /** Back to the newest page. */
    first: () => setCursors([undefined]),
    /** The page before this one, if any. */
    newer: cursors.length <= 1 ? undefined : () => setCursors(cursors.slice(0, -1)),
    /** The page after this one, if the list has one (its `next_cursor`). */
    older: (next: string | null) => next === null ? undefined : () => setCursors([...cursors, next])
  }
}

/** **Newer** and **Older** over cursor pages (`useCursorPages`), with `children` after. */
export const CursorPager = (
  { children, next, pages }: {
    readonly pages: ReturnType<typeof useCursorPages>
    readonly next: string | null
    readonly children?: ReactNode
  }
) => (
  <Pager backLabel="Newer" forwardLabel="Older" onBack={pages.newer} onForward={pages.older(next)}>
    {children}
  </Pager>
)
