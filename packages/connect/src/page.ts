/**
 * The script of the hosted Connect page (`/connect?link_token=…`): the end user picks the state
 * system and the state, enters the login the provider asks for, and the page answers the parent
 * (the SDK) with a public token — or, in redirect mode, returns to the link token's `redirect_uri`.
 * Messages to the parent go only to the origin the SDK declared.
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
  readonly update: { readonly provider: string; readonly state: string } | null
  readonly providers: ReadonlyArray<ProviderInfo>
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
let done = false

const post = (message: Record<string, unknown>) => {
  if (!embedded || parentOrigin === null) return
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

const h = (tag: string, attrs: Record<string, string> = {}, ...children: Array<any>) => {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v)
  for (const child of children) el.append(child)
  return el
}

const announce = (text: string) => {
  live.textContent = text
}

const screen = (title: string, ...children: Array<any>) => {
  app.replaceChildren()
  const heading = h("h1", { tabindex: "-1", id: "title" }, title)
  app.append(heading, ...children)
  const close = h("button", { type: "button", class: "link", id: "exit" }, "Exit")
  close.addEventListener("click", () => finishExit(null, "user_exited"))
  app.append(close)
  heading.focus()
}

const showError = (where: any, code: string, message: string) => {
  const box = h("p", { class: "error", role: "alert", id: "error", "data-code": code }, message)
  where.prepend(box)
  announce(message)
}

const finishExit = (error: { code: string; message: string } | null, status: string) => {
  if (done) return
  done = true
  event("EXIT", { error_code: error?.code ?? null })
  post({ type: "tracebridge:exit", error, status })
  if (!embedded) screen("You can close this window.")
}

const api = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  requestId = response.headers.get("x-request-id")
  const json = await response.json().catch(() => null)
  if (!response.ok) {
    const error = json?.error ??
      { code: "provider_unavailable", message: "Tracebridge could not be reached. Try again in a moment." }
    throw { code: String(error.code), message: String(error.message) }
  }
  return json.data
}

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
    "Which state system do you use?",
    h("p", {}, "Link your account so this app can read your compliance data. Your login goes to Tracebridge only."),
    list
  )
}

const chooseState = () => {
  const select = h("select", { id: "state", name: "state", required: "" }, h("option", { value: "" }, "Choose a state"))
  for (const s of provider!.states) select.append(h("option", { value: s }, s))
  const form = h(
    "form",
    { novalidate: "" },
    h("label", { for: "state" }, "State"),
    select,
    h("button", { type: "submit" }, "Continue")
  )
  form.addEventListener("submit", (e: any) => {
    e.preventDefault()
    if (select.value === "") return showError(form, "missing_state", "Choose the state your licence is in.")
    state = select.value
    event("SELECT_STATE")
    login()
  })
  screen(`${provider!.display_name}: your state`, form)
}

const login = () => {
  const form = h("form", { novalidate: "", id: "login" })
  for (const field of provider!.credential_fields) {
    const input = h("input", {
      id: `field-${field.name}`,
      name: field.name,
      type: field.secret ? "password" : "text",
      autocomplete: field.secret ? "current-password" : "username",
      required: ""
    })
    form.append(h("label", { for: `field-${field.name}` }, field.label), input)
    if (field.description) form.append(h("p", { class: "hint" }, field.description))
  }
  const submit = h("button", { type: "submit", id: "submit" }, "Link account")
  form.append(submit)
  if (session!.environment === "sandbox" && provider!.test_login) {
    const pairs = Object.entries(provider!.test_login).map(([k, v]) => `${k}: ${v}`).join(", ")
    form.append(h("p", { class: "hint" }, `Sandbox: use ${pairs}.`))
  }
  form.addEventListener("submit", async (e: any) => {
    e.preventDefault()
    const credentials: Record<string, string> = {}
    for (const field of provider!.credential_fields) credentials[field.name] = form.elements[field.name].value
    const missing = provider!.credential_fields.find((f) => credentials[f.name]!.trim() === "")
    form.querySelector("#error")?.remove()
    if (missing) return showError(form, "missing_field", `Enter your ${missing.label.toLowerCase()}.`)
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
      success(result)
    } catch (error: any) {
      submit.removeAttribute("disabled")
      submit.textContent = "Try again"
      event("ERROR", { error_code: error.code })
      showError(form, error.code, error.message)
      form.elements[provider!.credential_fields[0]!.name]?.focus()
    }
  })
  screen(
    session!.update ? `Re-enter your ${provider!.display_name} login` : `Log in to ${provider!.display_name}`,
    form
  )
}

const success = (result: { public_token: string; redirect_uri?: string | null }) => {
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
  screen("Your account is linked.", h("p", {}, "You can return to the app."))
}

const start = async () => {
  try {
    session = await api("GET", `/connect/session?link_token=${encodeURIComponent(linkToken)}`)
  } catch (error: any) {
    event("ERROR", { error_code: error.code })
    const retry = h("p", {}, "Ask the app to start linking again.")
    screen("This link cannot be used", retry)
    showError(app, error.code, error.message)
    return
  }
  if (session!.update) {
    provider = session!.providers.find((p) => p.name === session!.update!.provider) ?? null
    state = session!.update.state
    if (provider !== null) return login()
  }
  chooseProvider()
}

// Escape leaves the widget, as it would any dialog (only when embedded: a full page has nothing to close).
document.addEventListener("keydown", (e: any) => {
  if (e.key === "Escape" && embedded && !done) finishExit(null, "user_exited")
})

start()
