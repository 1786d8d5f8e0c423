// @ts-check
/**
 * The detail page of one request: its header (status, times, trace link),
 * the plan waiting for approval when it is suspended, Pre-Execution
 * (BeforePlanning, AfterPlanning), the plans as DAGs with their tool calls,
 * Post-Execution (AfterExecution, AfterSynthesis), operation-hook runs,
 * model calls, and the responses. While the request runs, the page follows
 * `GET /v1/records/{id}/events` and re-renders in place.
 */
import { ApiFailure, call, getJson } from "./api.js"
import { renderApproval } from "./approval.js"
import { renderCalls, renderResponse } from "./calls.js"
import { el, fill, json, link } from "./dom.js"
import { duration, statusClass, time } from "./format.js"
import { renderInvocations } from "./hooks.js"
import { asRecord, atStage, completion, operationRuns, traceIdOf, traceLink } from "./record.js"
import { readEvents } from "./sse.js"
import { renderPhases } from "./steps.js"

/**
 * @typedef {import("./record.js").ExecutionRecord} ExecutionRecord
 * @typedef {import("./api.js").ViewerConfig} ViewerConfig
 */

/**
 * @param {string} title
 * @param {string} className
 * @param {ReadonlyArray<Node>} children
 */
const section = (title, className, children) =>
  el("section", { className: `panel ${className}` }, el("h3", null, title), children)

/**
 * Mounts the detail of request `id` into `root`; returns a function that stops its live updates.
 *
 * @param {HTMLElement} root
 * @param {string} id
 * @param {ViewerConfig} config
 * @param {(error: unknown) => void} onError
 * @returns {() => void}
 */
export const mountDetail = (root, id, config, onError) => {
  const header = el("div", { className: "record-head" })
  const approval = el("div", { className: "approval" })
  const approvalPanel = section("Waiting for approval", "suspended-panel", [approval])
  const before = el("div", { className: "stage-cards", attrs: { "data-stage": "before_planning" } })
  const after = el("div", { className: "stage-cards", attrs: { "data-stage": "after_planning" } })
  const execution = el("div", { className: "stage-cards", attrs: { "data-stage": "after_execution" } })
  const synthesis = el("div", { className: "stage-cards", attrs: { "data-stage": "after_synthesis" } })
  const shortCircuit = el("div", { className: "short-circuit" })
  const phases = el("div", { className: "phases" })
  const operations = el("div", { className: "stage-cards operation-runs" })
  const calls = el("div", { className: "model-calls" })
  const response = el("div", { className: "responses" })
  const diagnostics = el("div", { className: "diagnostics" })
  const live = el("span", { className: "live-note", attrs: { role: "status" } })
  approvalPanel.hidden = true
  fill(
    root,
    el("p", null, el("a", { attrs: { href: "#/" } }, "← All requests"), " ", live),
    header,
    approvalPanel,
    el(
      "div",
      { className: "stages" },
      section("Pre-Execution", "pre-execution", [
        el("h4", null, "BeforePlanning"),
        before,
        shortCircuit,
        el("h4", null, "AfterPlanning"),
        after
      ]),
      section("Post-Execution", "post-execution", [
        el("h4", null, "AfterExecution"),
        execution,
        el("h4", null, "AfterSynthesis"),
        synthesis
      ])
    ),
    section("Plan and tools", "plan-tools", [phases]),
    section("Operation hooks", "operations", [operations]),
    section("Model calls", "calls", [calls]),
    section("Response", "response", [response]),
    section("Diagnostics", "diagnostics-panel", [diagnostics])
  )

  let stopped = false
  const controller = new AbortController()
  /** @type {string | undefined} */
  let approvalFor = undefined

  /** @param {ExecutionRecord} record */
  const render = (record) => {
    const status = completion(record)
    const lifecycle = record.lifecycle
    const traceId = traceIdOf(record)
    const href = traceLink(config.traceUrl, traceId)
    fill(
      header,
      el(
        "h2",
        null,
        el("span", { className: `${statusClass(status)} record-status` }, status),
        " ",
        el("span", { className: "request-id" }, record.requestId)
      ),
      el("p", { className: "request-text" }, record.request),
      el(
        "div",
        { className: "facts" },
        el("span", null, el("span", { className: "label" }, "Mode"), ` ${record.mode ?? "pipeline"}`),
        el("span", null, el("span", { className: "label" }, "Started"), ` ${time(lifecycle?.startedAt)}`),
        el("span", null, el("span", { className: "label" }, "Ended"), ` ${time(lifecycle?.endedAt)}`),
        lifecycle?.endedAt === undefined
          ? null
          : el(
            "span",
            null,
            el("span", { className: "label" }, "Took"),
            ` ${duration(lifecycle.endedAt - lifecycle.startedAt)}`
          ),
        el("span", null, el("span", { className: "label" }, "Revision"), ` ${record.record_revision ?? 0}`),
        lifecycle === undefined ? el("span", { className: "muted" }, "legacy record: no lifecycle evidence") : null,
        traceId === undefined
          ? null
          : el(
            "span",
            { className: "trace" },
            el("span", { className: "label" }, "Trace"),
            " ",
            href === undefined ? el("code", null, traceId) : link(href, traceId)
          ),
        record.checkpointId === undefined
          ? null
          : el(
            "span",
            null,
            el("span", { className: "label" }, "Checkpoint"),
            " ",
            el("code", null, record.checkpointId)
          )
      ),
      lifecycle?.errorTag === undefined && lifecycle?.errorMessage === undefined
        ? null
        : el(
          "p",
          { className: "error-text lifecycle-error" },
          `${lifecycle.errorTag ?? "Error"}: ${lifecycle.errorMessage ?? ""}`
        ),
      Object.keys(record.metadata ?? {}).length === 0
        ? null
        : el(
          "details",
          { className: "metadata" },
          el("summary", null, "Metadata"),
          el("pre", { className: "data" }, json(record.metadata))
        )
    )
    // A running request has not reached its later stages yet; a finished one without runs has none recorded.
    const none = status === "running" ? "not run yet" : "not recorded"
    renderInvocations(before, atStage(record, "before_planning"), none)
    renderInvocations(after, atStage(record, "after_planning"), none)
    renderInvocations(execution, atStage(record, "after_execution"), none)
    renderInvocations(synthesis, atStage(record, "after_synthesis"), none)
    renderInvocations(operations, operationRuns(record), "No operation hooks ran.")
    const sc = record.shortCircuit
    fill(
      shortCircuit,
      sc === undefined
        ? null
        : el(
          "p",
          { className: "short-circuited" },
          el("span", { className: "badge held" }, "short-circuit"),
          ` by ${sc.hookName} (${sc.kind}, ${sc.reason}${sc.source === undefined ? "" : `, source ${sc.source}`})`
        )
    )
    renderPhases(phases, record.phases ?? [])
    renderCalls(calls, record.modelCalls)
    renderResponse(response, record)
    fill(
      diagnostics,
      (record.diagnostics ?? []).length === 0
        ? el("p", { className: "muted" }, "None.")
        : el("ul", null, (record.diagnostics ?? []).map((d) => el("li", null, d)))
    )
    const waiting = status === "suspended" && record.checkpointId !== undefined ? record.checkpointId : undefined
    approvalPanel.hidden = waiting === undefined
    if (waiting !== undefined && approvalFor !== waiting) {
      approvalFor = waiting
      void renderApproval(approval, {
        checkpointId: waiting,
        readOnly: config.readOnly,
        onResumed: () => void refresh()
      })
    }
    if (waiting === undefined) approvalFor = undefined
    fill(live, status === "running" ? "live" : "")
  }

  const path = `/v1/records/${encodeURIComponent(id)}`

  /** Follows the record's events until it ends (or the page leaves). */
  const follow = async () => {
    fill(live, "live")
    try {
      const response = await call(`${path}/events`, {
        signal: controller.signal,
        headers: { accept: "text/event-stream" }
      })
      await readEvents(response, (event) => {
        if (stopped) return
        if (event.event === "record") {
          const record = asRecord(JSON.parse(event.data))
          if (record !== undefined) render(record)
        }
      })
    } catch (error) {
      if (stopped) return
      // The stream broke: poll instead, while the request runs.
      if (!(error instanceof ApiFailure && error.status === 401)) {
        await new Promise((resolve) => setTimeout(resolve, 1000))
      } else return onError(error)
    }
    if (!stopped) await refresh()
  }

  const refresh = async () => {
    try {
      const record = asRecord(await getJson(path, { signal: controller.signal }))
      if (stopped) return
      if (record === undefined) throw new Error("the server answered without a record")
      render(record)
      if (completion(record) === "running") void follow()
    } catch (error) {
      if (!stopped) onError(error)
    }
  }

  void refresh()
  return () => {
    stopped = true
    controller.abort()
  }
}
