// @ts-check
/**
 * The execution viewer's entry: reads the page configuration, asks for the
 * API key when the server requires one, and routes by the URL's hash —
 * `#/` the request list, `#/records/<id>` a request's detail.
 */
import { ApiFailure, loadConfig, storedKey, storeKey } from "./api.js"
import { renderKeyForm } from "./auth.js"
import { mountDetail } from "./detail.js"
import { el, fill } from "./dom.js"
import { mountList } from "./list.js"
import { route } from "./route.js"

const start = async () => {
  const main = document.getElementById("main")
  const banner = document.getElementById("banner")
  if (main === null || banner === null) return
  const config = await loadConfig()
  if (config.readOnly) fill(banner, el("span", { className: "badge" }, "read-only"))
  /** @type {() => void} */
  let dispose = () => {}

  /** @param {unknown} error */
  const onError = (error) => {
    if (error instanceof ApiFailure && error.status === 401) {
      dispose()
      storeKey(undefined)
      renderKeyForm(main, { refused: true, message: error.message, onKey: show })
      return
    }
    const message = error instanceof Error ? error.message : String(error)
    const existing = main.querySelector(".load-error")
    const note = el("p", { className: "load-error error-text", attrs: { role: "alert" } }, message)
    if (existing === null) main.prepend(note)
    else existing.replaceWith(note)
  }

  const show = () => {
    dispose()
    dispose = () => {}
    if (config.authRequired && storedKey() === undefined) {
      renderKeyForm(main, { refused: false, onKey: show })
      return
    }
    const current = route(location.hash)
    if (current.page === "list") mountList(main, onError)
    else dispose = mountDetail(main, current.id, config, onError)
  }

  window.addEventListener("hashchange", show)
  show()
}

void start()
