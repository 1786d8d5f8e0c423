// @ts-check
/**
 * The request list: one row per record (status, start, models, hook runs,
 * decisions), newest first, filtered by status, hook name and start time,
 * paged with the server's `next` cursor. A row opens the request's detail
 * (`#/records/<id>`).
 */
import { getJson } from "./api.js"
import { el, fill, keyed } from "./dom.js"
import { duration, fromLocalInput, statusClass, time } from "./format.js"

/**
 * @typedef {{ readonly requestId: string, readonly status: string, readonly mode?: string, readonly startedAt?: number, readonly endedAt?: number, readonly request?: string, readonly models?: ReadonlyArray<string>, readonly hookCount?: number, readonly decisions?: number, readonly checkpointId?: string, readonly traceId?: string }} RecordSummary
 * @typedef {{ readonly records: ReadonlyArray<RecordSummary>, readonly undecodable?: number, readonly next?: string }} RecordPage
 */

export const STATUSES = [
  "running",
  "succeeded",
  "failed",
  "suspended",
  "rejected",
  "interrupted",
  "abandoned",
  "unknown"
]

/**
 * The query string of a page of the list.
 *
 * @param {{ readonly status: ReadonlyArray<string>, readonly hook: string, readonly from?: number | undefined, readonly before?: number | undefined, readonly cursor?: string | undefined, readonly limit?: number }} filters
 * @returns {string}
 */
export const listQuery = (filters) => {
  const params = new URLSearchParams()
  if (filters.status.length > 0) params.set("status", filters.status.join(","))
  if (filters.hook.trim() !== "") params.set("hook", filters.hook.trim())
  if (filters.from !== undefined) params.set("startedFrom", String(filters.from))
  if (filters.before !== undefined) params.set("startedBefore", String(filters.before))
  params.set("limit", String(filters.limit ?? 25))
  if (filters.cursor !== undefined) params.set("cursor", filters.cursor)
  return params.toString()
}

/**
 * @param {unknown} body
 * @returns {RecordPage}
 */
const asPage = (body) => {
  const page = /** @type {Partial<RecordPage> | null} */ (typeof body === "object" ? body : null)
  return {
    records: Array.isArray(page?.records) ? page.records : [],
    undecodable: typeof page?.undecodable === "number" ? page.undecodable : 0,
    ...(typeof page?.next === "string" ? { next: page.next } : {})
  }
}

/**
 * @param {RecordSummary} summary
 * @returns {(node: HTMLElement) => void}
 */
const renderRow = (summary) => (node) => {
  node.className = "row"
  node.setAttribute("data-request-id", summary.requestId)
  const open = el("a", { className: "open" }, summary.requestId)
  open.href = `#/records/${encodeURIComponent(summary.requestId)}`
  const took = summary.endedAt !== undefined && summary.startedAt !== undefined
    ? duration(summary.endedAt - summary.startedAt)
    : ""
  fill(
    node,
    el("td", null, el("span", { className: statusClass(summary.status) }, summary.status)),
    el("td", null, open, el("div", { className: "request-text" }, summary.request ?? "")),
    el(
      "td",
      { className: "nowrap" },
      time(summary.startedAt),
      took === "" ? null : el("div", { className: "muted" }, took)
    ),
    el("td", null, (summary.models ?? []).length === 0 ? "—" : (summary.models ?? []).join(", ")),
    el("td", { className: "num" }, String(summary.hookCount ?? 0)),
    el("td", { className: "num" }, String(summary.decisions ?? 0)),
    el("td", null, summary.mode ?? "")
  )
}

/**
 * Mounts the list into `root`.
 *
 * @param {HTMLElement} root
 * @param {(error: unknown) => void} onError
 */
export const mountList = (root, onError) => {
  const statusBoxes = STATUSES.map((status) => {
    const box = el("input", { attrs: { type: "checkbox", value: status, name: "status" } })
    return { status, box, label: el("label", { className: "check" }, box, ` ${status}`) }
  })
  const hook = el("input", { attrs: { type: "text", name: "hook", placeholder: "hook name", autocomplete: "off" } })
  const from = el("input", { attrs: { type: "datetime-local", name: "from", step: "1" } })
  const before = el("input", { attrs: { type: "datetime-local", name: "before", step: "1" } })
  const apply = el("button", { attrs: { type: "submit" } }, "Apply")
  const form = el(
    "form",
    { className: "filters" },
    el("fieldset", null, el("legend", null, "Status"), statusBoxes.map((s) => s.label)),
    el("label", null, "Hook ", hook),
    el("label", null, "Started from ", from),
    el("label", null, "before ", before),
    apply
  )
  const body = el("tbody", null)
  const table = el(
    "table",
    { className: "records" },
    el(
      "thead",
      null,
      el(
        "tr",
        null,
        ["Status", "Request", "Started", "Models", "Hooks", "Decisions", "Mode"].map((h) => el("th", null, h))
      )
    ),
    body
  )
  const note = el("p", { className: "muted note" })
  const newer = el("button", { attrs: { type: "button", disabled: "" } }, "← Newer")
  const older = el("button", { attrs: { type: "button", disabled: "" } }, "Older →")
  const pager = el("div", { className: "pager" }, newer, older)
  fill(root, el("h2", null, "Requests"), form, table, note, pager)

  /** @type {Array<string | undefined>} cursors of the pages before the current one */
  let trail = []
  /** @type {string | undefined} */
  let cursor = undefined
  /** @type {string | undefined} */
  let next = undefined

  const filters = () => ({
    status: statusBoxes.filter((s) => s.box.checked).map((s) => s.status),
    hook: hook.value,
    from: fromLocalInput(from.value),
    before: fromLocalInput(before.value),
    cursor
  })

  const load = async () => {
    try {
      const page = asPage(await getJson(`/v1/records?${listQuery(filters())}`))
      keyed(body, page.records.map((summary) => ({ key: summary.requestId, tag: "tr", render: renderRow(summary) })))
      next = page.next
      older.disabled = next === undefined
      newer.disabled = trail.length === 0
      fill(
        note,
        page.records.length === 0 ? "No records match." : `${page.records.length} shown.`,
        (page.undecodable ?? 0) > 0 ? ` ${page.undecodable} stored record(s) could not be read.` : null
      )
    } catch (error) {
      onError(error)
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault()
    trail = []
    cursor = undefined
    void load()
  })
  older.addEventListener("click", () => {
    if (next === undefined) return
    trail.push(cursor)
    cursor = next
    void load()
  })
  newer.addEventListener("click", () => {
    if (trail.length === 0) return
    cursor = trail.pop()
    void load()
  })
  void load()
}
