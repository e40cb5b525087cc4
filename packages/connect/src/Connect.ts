/**
 * The Tracebridge Connect SDK: opens the hosted Connect page (in an iframe over the integrator's
 * page) where the end user links their state login, and hands the integrator a public token. The
 * login never passes through the integrator's page. No dependencies; served as a script at
 * `/connect/sdk.js` (`window.Tracebridge.Connect`) and importable as ESM.
 *
 * ```js
 * const handle = Tracebridge.Connect.create({
 *   token: linkToken,
 *   onSuccess: (publicToken, metadata) => fetch("/exchange", { method: "POST", body: publicToken }),
 *   onExit: (error, metadata) => console.log(error),
 *   onEvent: (name, metadata) => console.log(name, metadata)
 * })
 * handle.open()
 * ```
 *
 * Exactly one of `onSuccess` and `onExit` is called per session, once.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 * @category models
 */
export type EventName =
  | "OPEN"
  | "SELECT_PROVIDER"
  | "SELECT_STATE"
  | "SUBMIT_CREDENTIALS"
  | "ERROR"
  | "EXIT"
  | "SUCCESS"

/**
 * @since 0.1.0
 * @category models
 */
export interface EventMetadata {
  readonly link_session_id: string | null
  readonly request_id: string | null
  readonly provider?: string | null
  readonly state?: string | null
  readonly error_code?: string | null
  readonly timestamp: string
}

/**
 * What `onExit` receives when the flow ended in a failure: the API's error object (`type`, `code`,
 * `message`; the request id is in the metadata). `type` is one of the API's error types
 * (`validation_error`, `provider_error`, `api_error`, …); `code` says what happened, e.g.
 * `link_token_invalid`, `link_token_expired`, `link_token_used` (the link token cannot be used),
 * `invalid_credentials`, `account_locked` (the state system refused the login),
 * `provider_unavailable`, `provider_timeout` (the state system is down) or `internal_error`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectError {
  readonly type: string
  readonly code: string
  readonly message: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface SuccessMetadata {
  readonly link_session_id: string | null
  readonly provider: string | null
  readonly state: string | null
}

/**
 * `status` is `user_exited` (the user closed the widget; `error` is null) or `failed` (the flow
 * ended in a failure; `error` says which).
 *
 * @since 0.1.0
 * @category models
 */
export interface ExitMetadata {
  readonly link_session_id: string | null
  readonly request_id: string | null
  readonly status: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The link token your server created. */
  readonly token: string
  readonly onSuccess: (publicToken: string, metadata: SuccessMetadata) => void
  /**
   * Called once when the session ends without a public token: `error` is `{type, code, message}`
   * whenever the flow ended in a failure (a link token that is invalid, expired or used; a login
   * the state system refused, or another error, that the user saw before leaving), and `null` when
   * the user simply closed the widget.
   */
  readonly onExit?: (error: ConnectError | null, metadata: ExitMetadata) => void
  readonly onEvent?: (name: EventName, metadata: EventMetadata) => void
  /**
   * Redirect mode: the URL the hosted page returned to (with `public_token` and `state`, or
   * `error`); `open()` then completes the session from it.
   */
  readonly receivedRedirectUri?: string
  /** Where Tracebridge serves the Connect page; defaults to the origin the SDK script came from. */
  readonly origin?: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Handle {
  readonly open: () => void
  readonly destroy: () => void
}

declare const document: any
declare const window: any

const scriptOrigin = (): string | undefined => {
  const current = typeof document !== "undefined" ? document.currentScript : null
  if (current && current.src) return new URL(current.src).origin
  return undefined
}
const defaultOrigin = scriptOrigin()

const now = () => new Date().toISOString()

/** The error object as the contract gives it, whatever arrived. */
const toError = (error: any): ConnectError | null =>
  error === null || error === undefined || typeof error !== "object"
    ? null
    : {
      type: typeof error.type === "string" ? error.type : "api_error",
      code: typeof error.code === "string" ? error.code : "internal_error",
      message: typeof error.message === "string" ? error.message : "Connect did not finish"
    }

/**
 * Creates a Connect session.
 *
 * @since 0.1.0
 * @category constructors
 */
export const create = (options: Options): Handle => {
  const origin = (options.origin ?? defaultOrigin ?? (typeof window !== "undefined" ? window.location.origin : ""))
    .replace(/\/+$/, "")
  let overlay: any = null
  let frame: any = null
  let listener: ((event: any) => void) | null = null
  let finished = false
  let linkSessionId: string | null = null
  let lastRequestId: string | null = null

  const emit = (name: EventName, extra: Partial<EventMetadata> = {}) => {
    options.onEvent?.(name, { link_session_id: linkSessionId, request_id: lastRequestId, timestamp: now(), ...extra })
  }

  const teardown = () => {
    if (listener !== null && typeof window !== "undefined") window.removeEventListener("message", listener)
    listener = null
    if (overlay !== null && overlay.parentNode) overlay.parentNode.removeChild(overlay)
    overlay = null
    frame = null
  }

  const succeed = (publicToken: string, metadata: SuccessMetadata) => {
    if (finished) return
    finished = true
    teardown()
    options.onSuccess(publicToken, metadata)
  }

  const exit = (error: ConnectError | null, status: string) => {
    if (finished) return
    finished = true
    teardown()
    options.onExit?.(error, { link_session_id: linkSessionId, request_id: lastRequestId, status })
  }

  const fromRedirect = (uri: string) => {
    const url = new URL(uri)
    const publicToken = url.searchParams.get("public_token")
    linkSessionId = url.searchParams.get("link_session_id")
    if (publicToken !== null) {
      emit("SUCCESS")
      succeed(publicToken, {
        link_session_id: linkSessionId,
        provider: url.searchParams.get("provider"),
        state: url.searchParams.get("state_code")
      })
    } else if (url.searchParams.get("error") === null && url.searchParams.get("status") === "user_exited") {
      emit("EXIT")
      exit(null, "user_exited")
    } else {
      const error = {
        type: url.searchParams.get("error_type") ?? "api_error",
        code: url.searchParams.get("error") ?? "internal_error",
        message: url.searchParams.get("error_description") ?? "Connect did not finish"
      }
      emit("EXIT", { error_code: error.code })
      exit(error, "failed")
    }
  }

  const open = () => {
    if (finished || overlay !== null) return
    if (options.receivedRedirectUri !== undefined) return fromRedirect(options.receivedRedirectUri)
    emit("OPEN")
    const parentOrigin = window.location.origin
    overlay = document.createElement("div")
    overlay.setAttribute("role", "dialog")
    overlay.setAttribute("aria-modal", "true")
    overlay.setAttribute("aria-label", "Link your state system account")
    overlay.style.cssText =
      "position:fixed;inset:0;z-index:2147483647;background:rgba(15,23,42,.55);display:flex;align-items:center;justify-content:center"
    frame = document.createElement("iframe")
    frame.title = "Tracebridge Connect"
    frame.src = `${origin}/connect?link_token=${encodeURIComponent(options.token)}&parent_origin=${
      encodeURIComponent(parentOrigin)
    }`
    // a sheet over the page; full screen on a phone
    const small = window.innerWidth <= 480
    frame.style.cssText = `border:0;width:min(440px,100vw);height:${
      small ? "100%" : "min(620px,100vh)"
    };background:#fff;border-radius:${small ? 0 : 12}px;box-shadow:0 20px 50px rgba(15,23,42,.35)`
    overlay.appendChild(frame)
    document.body.appendChild(overlay)
    listener = (event: any) => {
      if (event.origin !== origin || frame === null || event.source !== frame.contentWindow) return
      const data = event.data
      if (typeof data !== "object" || data === null || typeof data.type !== "string") return
      if (typeof data.link_session_id === "string") linkSessionId = data.link_session_id
      if (typeof data.request_id === "string") lastRequestId = data.request_id
      if (data.type === "tracebridge:event") emit(data.name, data.metadata ?? {})
      else if (data.type === "tracebridge:success") succeed(String(data.public_token), data.metadata)
      else if (data.type === "tracebridge:exit") {
        const error = toError(data.error)
        exit(error, error === null ? "user_exited" : "failed")
      }
    }
    window.addEventListener("message", listener)
    frame.focus()
  }

  return {
    open,
    destroy: () => {
      finished = true
      teardown()
    }
  }
}

/**
 * The namespace the script version installs as `window.Tracebridge.Connect`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Connect = { create }
