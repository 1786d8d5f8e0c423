// @ts-check
/**
 * The viewer's reads and its one write (an approval), over the server's
 * JSON API. With an API key in the session (`sessionStorage`), every call
 * carries `Authorization: Bearer <key>`; a 401 is an `ApiFailure` whose
 * `status` the page shows as a refusal.
 */

const KEY = "effect-agent-pipeline.apiKey"

/** @type {string | undefined} the key when storage is disabled */
let memoryKey = undefined

/** The API key of this browser session, if one was entered. */
export const storedKey = () => {
  try {
    return sessionStorage.getItem(KEY) ?? memoryKey
  } catch {
    return memoryKey
  }
}

/** @param {string | undefined} key */
export const storeKey = (key) => {
  try {
    if (key === undefined || key === "") sessionStorage.removeItem(KEY)
    else sessionStorage.setItem(KEY, key)
  } catch {
    // Storage disabled: the key lasts as long as the page instead.
  }
  memoryKey = key === "" ? undefined : key
}

/** A failed call: its HTTP status and the server's error message. */
export class ApiFailure extends Error {
  /**
   * @param {number} status
   * @param {string} message
   * @param {string | undefined} code
   */
  constructor(status, message, code) {
    super(message)
    this.status = status
    this.code = code
  }
}

/**
 * @param {RequestInit} init
 * @returns {RequestInit}
 */
const withKey = (init) => {
  const key = storedKey()
  const headers = new Headers(init.headers)
  if (key !== undefined) headers.set("authorization", `Bearer ${key}`)
  return { ...init, headers }
}

/**
 * The error message of a failed response (the server's `error.message`, when it sent one).
 *
 * @param {Response} response
 * @returns {Promise<ApiFailure>}
 */
const failure = async (response) => {
  let message = `${response.status} ${response.statusText}`
  /** @type {string | undefined} */
  let code = undefined
  try {
    const body = /** @type {unknown} */ (await response.json())
    if (typeof body === "object" && body !== null && "error" in body) {
      const error = /** @type {{ readonly error: unknown }} */ (body).error
      if (typeof error === "object" && error !== null) {
        const fields = /** @type {{ readonly message?: unknown, readonly code?: unknown }} */ (error)
        if (typeof fields.message === "string") message = fields.message
        if (typeof fields.code === "string") code = fields.code
      }
    }
  } catch {
    // Not JSON: the status line says enough.
  }
  return new ApiFailure(response.status, message, code)
}

/**
 * A call whose response is returned as it is once it is a success.
 *
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<Response>}
 */
export const call = async (path, init = {}) => {
  const response = await fetch(path, withKey(init))
  if (!response.ok) throw await failure(response)
  return response
}

/**
 * A call whose JSON body is returned.
 *
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<unknown>}
 */
export const getJson = async (path, init = {}) => (await call(path, init)).json()

/**
 * A POST of a JSON body, returning the JSON answer.
 *
 * @param {string} path
 * @param {unknown} body
 * @returns {Promise<unknown>}
 */
export const postJson = (path, body) =>
  getJson(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

/**
 * @typedef {{ readonly traceUrl?: string, readonly readOnly: boolean, readonly authRequired: boolean }} ViewerConfig
 */

/**
 * The page's configuration (public: no key needed).
 *
 * @returns {Promise<ViewerConfig>}
 */
export const loadConfig = async () => {
  const response = await fetch("/viewer/config.json")
  if (!response.ok) return { readOnly: true, authRequired: false }
  const body = /** @type {Record<string, unknown>} */ (await response.json())
  return {
    ...(typeof body.traceUrl === "string" ? { traceUrl: body.traceUrl } : {}),
    readOnly: body.readOnly === true,
    authRequired: body.authRequired === true
  }
}
