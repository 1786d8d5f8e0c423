// @ts-check
/**
 * The API key form, shown when the server requires a key and the session
 * has none, or when the server refused the one it has (401). The key is
 * kept in `sessionStorage` (this tab, until it closes) and sent as
 * `Authorization: Bearer`.
 */
import { storeKey } from "./api.js"
import { el, fill } from "./dom.js"

/**
 * Fills `root` with the key form; `onKey` runs once a key is entered.
 *
 * @param {HTMLElement} root
 * @param {{ readonly refused: boolean, readonly message?: string | undefined, readonly onKey: () => void }} options
 */
export const renderKeyForm = (root, options) => {
  const input = el("input", {
    attrs: { type: "password", name: "apiKey", autocomplete: "current-password", required: "", "aria-label": "API key" }
  })
  const form = el(
    "form",
    { className: "key-form" },
    el("label", null, "API key ", input),
    " ",
    el("button", { attrs: { type: "submit" } }, "Open")
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    storeKey(input.value)
    options.onKey()
  })
  fill(
    root,
    el("h2", null, "This server requires an API key"),
    options.refused
      ? el(
        "p",
        { className: "refusal", attrs: { role: "alert" } },
        "Refused: the server did not accept the API key",
        options.message === undefined ? "." : ` (${options.message}).`
      )
      : el("p", null, "Enter the key the server was started with (AGENT_API_KEY). It stays in this tab only."),
    form
  )
  input.focus()
}
