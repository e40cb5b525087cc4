/**
 * The script of the hosted Connect page (`/connect?link_token=…`): the end user picks the state
 * system and the state, enters the login the provider asks for, sees a success pane, and the page
 * answers the parent (the SDK) with a public token — or, in redirect mode, returns to the link
 * token's `redirect_uri`. Messages to the parent go only to the origin the SDK declared.
 *
 * Every pane shows the integrator's name (and logo, when the link token has one) and a close
 * control; every numbered step shows "Step n of N", and every step after the first has Back.
 * Leaving ends the session through `onExit(error, metadata)`: `error` is `{type, code, message}`
 * when the flow ended in a failure (a link token that cannot be used, or the last refusal the user
 * saw before leaving) and `null` when the user simply closed it.
 */
declare const document: any
declare const window: any
declare const location: any

interface Field {
  readonly name: string
  readonly label: string
  readonly secret: boolean
  readonly description?: string
}
interface ProviderInfo {
  readonly name: string
  readonly display_name: string
  readonly states: ReadonlyArray<string>
  readonly credential_fields: ReadonlyArray<Field>
  readonly test_login?: Readonly<Record<string, string>>
}
interface SessionInfo {
  readonly link_session_id: string
  readonly environment: string
  readonly redirect: boolean
  readonly exit_uri: string | null
  readonly client_name: string
  readonly logo_url: string | null
  readonly frame_ancestors: ReadonlyArray<string>
  readonly update: { readonly provider: string; readonly state: string } | null
  readonly providers: ReadonlyArray<ProviderInfo>
}
/** What `onExit` receives: the contract's error object, without the request id (in the metadata). */
interface FlowError {
  readonly type: string
  readonly code: string
  readonly message: string
}

const params = new URLSearchParams(location.search)
const linkToken = params.get("link_token") ?? ""
const parentOrigin = params.get("parent_origin")
const embedded = window.parent !== window
const app = document.getElementById("app")
const live = document.getElementById("live")
let session: SessionInfo | null = null
let requestId: string | null = null
let provider: ProviderInfo | null = null
let state: string | null = null
/** The last failure the user saw: what `onExit` reports if they leave now. */
let lastError: FlowError | null = null
/** What the close control does on the current pane. */
let onClose: () => void = () => finishExit(lastError)
let done = false

/**
 * Whether the SDK's declared origin is one the link token lets frame the page (its
 * `frame_ancestors`, issue #28): the query alone never decides where a public token goes.
 */
const parentAllowed = (): boolean => {
  if (parentOrigin === null) return false
  // before the session is known only errors are posted, and only to the real parent
  if (session === null) return true
  let parent: any
  try {
    parent = new URL(parentOrigin)
  } catch {
    return false
  }
  if (parent.origin !== parentOrigin) return false
  return session.frame_ancestors.some((source) => {
    if (source === "'self'") return parentOrigin === location.origin
    const wild = /^(https?:)\/\/([^/:]+):\*$/.exec(source)
    if (wild !== null) return parent.protocol === wild[1] && parent.hostname === wild[2]
    return source === parentOrigin
  })
}

const post = (message: Record<string, unknown>) => {
  if (!embedded || !parentAllowed()) return
  window.parent.postMessage(
    { ...message, link_session_id: session?.link_session_id ?? null, request_id: requestId },
    parentOrigin
  )
}
const event = (name: string, metadata: Record<string, unknown> = {}) =>
  post({
    type: "tracebridge:event",
    name,
    metadata: {
      link_session_id: session?.link_session_id ?? null,
      request_id: requestId,
      provider: provider?.name ?? null,
      state,
      timestamp: new Date().toISOString(),
      ...metadata
    }
  })

/** An element; children are text or elements (`append` never parses HTML). */
const h = (tag: string, attrs: Record<string, string> = {}, ...children: Array<any>) => {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v)
  for (const child of children) el.append(child)
  return el
}

const announce = (text: string) => {
  live.textContent = text
}

/** Who the user links their account to, in running text. */
const clientName = () => session?.client_name || "this app"

/** The integrator's name and logo, the same on every pane. */
const brand = () => {
  const name = session?.client_name || "Tracebridge Connect"
  const box = h("div", { class: "brand", id: "brand" })
  if (session?.logo_url) {
    // set as an attribute of a created element (never parsed as HTML); the CSP allows https images only
    const logo = h("img", {
      id: "logo",
      src: session.logo_url,
      alt: "",
      width: "28",
      height: "28",
      referrerpolicy: "no-referrer"
    })
    logo.addEventListener("error", () => logo.remove())
    box.append(logo)
  }
  box.append(h("span", { id: "client-name" }, name))
  return box
}

interface Pane {
  readonly title: string
  /** "Step n of N" for a numbered step; the success and error panes have none. */
  readonly step?: { readonly n: number; readonly of: number }
  readonly back?: () => void
  readonly close?: () => void
  readonly status?: string
  /** Centred, as the success pane is. */
  readonly center?: boolean
  /** An element above the heading (the success pane's tick). */
  readonly icon?: any
}

const screen = (pane: Pane, ...children: Array<any>) => {
  app.replaceChildren()
  app.className = pane.center ? "center" : ""
  onClose = pane.close ?? (() => finishExit(lastError))
  const bar = h("div", { class: "bar" })
  if (pane.back) {
    const back = h("button", { type: "button", class: "icon back", id: "back", "aria-label": "Back" }, "‹ Back")
    back.addEventListener("click", pane.back)
    bar.append(back)
  } else {
    bar.append(h("span", { class: "icon-space" }))
  }
  bar.append(brand())
  const close = h("button", { type: "button", class: "icon close", id: "close", "aria-label": "Close" }, "✕")
  close.addEventListener("click", () => onClose())
  bar.append(close)
  app.append(h("header", {}, bar))
  if (pane.step) {
    const dots = h("span", { class: "dots", "aria-hidden": "true" })
    for (let i = 1; i <= pane.step.of; i++) dots.append(h("span", { class: i <= pane.step.n ? "dot on" : "dot" }))
    app.append(
      h(
        "p",
        { class: "steps", id: "step" },
        dots,
        h("span", { id: "step-text" }, `Step ${pane.step.n} of ${pane.step.of}`)
      )
    )
  } else if (pane.status) {
    const dots = h("span", { class: "dots", "aria-hidden": "true" })
    for (let i = 1; i <= steps(); i++) dots.append(h("span", { class: "dot on" }))
    app.append(h("p", { class: "steps", id: "step" }, dots, h("span", { id: "step-text" }, pane.status)))
  }
  const heading = h("h1", { tabindex: "-1", id: "title" }, pane.title)
  if (pane.icon) app.append(pane.icon)
  app.append(heading, ...children)
  app.append(h("p", { class: "foot" }, "Secured by Tracebridge · your login goes to Tracebridge only"))
  heading.focus()
}

const showError = (where: any, error: FlowError) => {
  where.querySelector("#error")?.remove()
  const box = h("p", { class: "error", role: "alert", id: "error", "data-code": error.code }, error.message)
  where.prepend(box)
  announce(error.message)
}

/** Ends the session without a public token: `error` null when the user just left. */
const finishExit = (error: FlowError | null) => {
  if (done) return
  done = true
  const status = error === null ? "user_exited" : "failed"
  event("EXIT", { error_code: error?.code ?? null })
  if (embedded) {
    post({ type: "tracebridge:exit", error, status })
    return
  }
  if (session?.exit_uri) {
    const url = new URL(session.exit_uri)
    url.searchParams.set("status", status)
    url.searchParams.set("link_session_id", session.link_session_id)
    if (error !== null) {
      url.searchParams.set("error", error.code)
      url.searchParams.set("error_type", error.type)
      url.searchParams.set("error_description", error.message)
    }
    location.assign(url.toString())
    return
  }
  screen({ title: "You can close this window.", close: () => undefined })
}

const api = async (method: string, path: string, body?: unknown) => {
  let response: any
  try {
    response = await fetch(path, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  } catch {
    throw {
      type: "api_error",
      code: "internal_error",
      message: "Tracebridge could not be reached. Check your connection and try again."
    } satisfies FlowError
  }
  requestId = response.headers.get("x-request-id")
  const json = await response.json().catch(() => null)
  if (!response.ok) {
    const error = json?.error ?? {}
    throw {
      type: String(error.type ?? "api_error"),
      code: String(error.code ?? "internal_error"),
      message: String(error.message ?? "Something went wrong at Tracebridge. Try again in a moment.")
    } satisfies FlowError
  }
  return json.data
}

/** The numbered steps: provider, state and login; in update mode the login only. */
const steps = () => (session!.update && provider !== null ? 1 : 3)

const chooseProvider = () => {
  const list = h("div", { class: "choices", role: "group", "aria-labelledby": "title" })
  for (const p of session!.providers) {
    const button = h("button", { type: "button", class: "choice", "data-provider": p.name }, p.display_name)
    button.addEventListener("click", () => {
      provider = p
      event("SELECT_PROVIDER")
      chooseState()
    })
    list.append(button)
  }
  screen(
    { title: "Which state system do you use?", step: { n: 1, of: 3 } },
    h(
      "p",
      { class: "lead" },
      `Link your account so ${clientName()} can read your compliance data. Your login goes to Tracebridge only.`
    ),
    list
  )
}

const chooseState = () => {
  const select = h("select", { id: "state", name: "state", required: "" }, h("option", { value: "" }, "Choose a state"))
  for (const s of provider!.states) select.append(h("option", { value: s }, s))
  if (state !== null && provider!.states.includes(state)) select.value = state
  const form = h(
    "form",
    { novalidate: "" },
    h("label", { for: "state" }, "State"),
    select,
    h("button", { type: "submit" }, "Continue")
  )
  form.addEventListener("submit", (e: any) => {
    e.preventDefault()
    if (select.value === "") {
      return showError(form, {
        type: "validation_error",
        code: "missing_state",
        message: "Choose the state your licence is in."
      })
    }
    state = select.value
    event("SELECT_STATE")
    login()
  })
  screen({ title: `${provider!.display_name}: your state`, step: { n: 2, of: 3 }, back: chooseProvider }, form)
}

const login = () => {
  const form = h("form", { novalidate: "", id: "login" })
  for (const field of provider!.credential_fields) {
    const input = h("input", {
      id: `field-${field.name}`,
      name: field.name,
      type: field.secret ? "password" : "text",
      autocomplete: field.secret ? "current-password" : "username",
      autocapitalize: "off",
      spellcheck: "false",
      required: ""
    })
    form.append(h("label", { for: `field-${field.name}` }, field.label), input)
    if (field.description) form.append(h("p", { class: "hint" }, field.description))
  }
  const submit = h("button", { type: "submit", id: "submit" }, "Link account")
  form.append(submit)
  if (session!.environment === "sandbox" && provider!.test_login) {
    const label = (name: string) => provider!.credential_fields.find((f) => f.name === name)?.label ?? name
    const pairs = Object.entries(provider!.test_login).map(([k, v]) => `${label(k)} ${v}`).join(", ")
    form.append(h("p", { class: "hint sandbox" }, `Sandbox: use ${pairs}.`))
  }
  form.addEventListener("submit", async (e: any) => {
    e.preventDefault()
    const credentials: Record<string, string> = {}
    for (const field of provider!.credential_fields) credentials[field.name] = form.elements[field.name].value
    const missing = provider!.credential_fields.find((f) => credentials[f.name]!.trim() === "")
    form.querySelector("#error")?.remove()
    if (missing) {
      return showError(form, {
        type: "validation_error",
        code: "missing_field",
        message: `Enter your ${missing.label.toLowerCase()}.`
      })
    }
    submit.setAttribute("disabled", "")
    submit.textContent = "Checking…"
    event("SUBMIT_CREDENTIALS")
    try {
      const result = await api("POST", "/connect/submit", {
        link_token: linkToken,
        link_session_id: session!.link_session_id,
        provider: provider!.name,
        state,
        credentials
      })
      linked(result)
    } catch (error: any) {
      if (done) return
      lastError = error
      submit.removeAttribute("disabled")
      submit.textContent = "Try again"
      event("ERROR", { error_code: error.code })
      if (/^link_token_/.test(error.code)) return unusable(error)
      showError(form, error)
      form.elements[provider!.credential_fields[0]!.name]?.focus()
    }
  })
  const update = session!.update !== null && steps() === 1
  screen(
    {
      title: update ? `Re-enter your ${provider!.display_name} login` : `Log in to ${provider!.display_name}`,
      step: update ? { n: 1, of: 1 } : { n: 3, of: 3 },
      ...(update ? {} : { back: chooseState })
    },
    form
  )
}

/** The success pane: the login is linked; Continue (or close) hands the public token over. */
const linked = (result: { public_token: string; redirect_uri?: string | null }) => {
  if (done) return
  lastError = null
  const handOver = () => {
    if (done) return
    done = true
    event("SUCCESS")
    if (result.redirect_uri) {
      location.assign(result.redirect_uri)
      return
    }
    post({
      type: "tracebridge:success",
      public_token: result.public_token,
      metadata: { link_session_id: session!.link_session_id, provider: provider!.name, state }
    })
    if (!embedded) screen({ title: "You can close this window.", close: () => undefined })
  }
  const proceed = h("button", { type: "button", id: "continue" }, embedded || result.redirect_uri ? "Continue" : "Done")
  proceed.addEventListener("click", handOver)
  screen(
    {
      title: "Your account is linked.",
      status: "Done",
      close: handOver,
      center: true,
      icon: h("div", { class: "tick", "aria-hidden": "true" }, "✓")
    },
    h(
      "p",
      { class: "lead", id: "success" },
      `${clientName()} can now read your ${provider!.display_name} data for ${state}.`
    ),
    proceed
  )
  announce("Your account is linked.")
}

/** A link token that cannot be used: nothing to retry here, so leaving reports the error. */
const unusable = (error: FlowError) => {
  lastError = error
  const leave = h("button", { type: "button", id: "leave" }, "Close")
  leave.addEventListener("click", () => finishExit(error))
  const box = h("div", {})
  screen(
    { title: "This link cannot be used", close: () => finishExit(error) },
    box,
    h("p", { class: "lead" }, "Nothing was linked, and no login was sent."),
    leave
  )
  showError(box, error)
}

const start = async () => {
  try {
    session = await api("GET", `/connect/session?link_token=${encodeURIComponent(linkToken)}`)
  } catch (error: any) {
    event("ERROR", { error_code: error.code })
    return unusable(error)
  }
  if (session!.update) {
    provider = session!.providers.find((p) => p.name === session!.update!.provider) ?? null
    state = session!.update.state
    if (provider !== null) return login()
  }
  chooseProvider()
}

// Escape does what the close control does, as it would in any dialog (only when embedded: a full
// page has nothing to close).
document.addEventListener("keydown", (e: any) => {
  if (e.key === "Escape" && embedded && !done) onClose()
})

start()
