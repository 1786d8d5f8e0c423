// @ts-check
/**
 * The model's side of a request: every model call (purpose, phase, re-ask,
 * attempt, model, outcome, timing, tokens, the prompt and the raw output),
 * and the response — the model's raw draft apart from the final response
 * the application returned (model success and application success are
 * different outcomes).
 */
import { el, fill } from "./dom.js"
import { duration, statusClass, time } from "./format.js"

/**
 * @typedef {{ readonly inputTokens?: number, readonly outputTokens?: number, readonly totalTokens?: number }} ModelUsage
 * @typedef {{ readonly purpose: string, readonly phase?: number, readonly reask: number, readonly attempt: number, readonly model: string, readonly modelId?: string, readonly streamed: boolean, readonly startedAt: number, readonly durationMs: number, readonly outcome: string, readonly prompt?: string, readonly output?: string, readonly usage?: ModelUsage, readonly error?: string }} ModelCall
 */

/**
 * @param {ModelUsage | undefined} usage
 * @returns {string}
 */
export const tokens = (usage) => {
  if (usage === undefined) return "not reported"
  const part = (/** @type {number | undefined} */ n) => (n === undefined ? "?" : String(n))
  return `${part(usage.inputTokens)} in · ${part(usage.outputTokens)} out · ${part(usage.totalTokens)} total`
}

/**
 * @param {string} summary
 * @param {string | undefined} text
 * @param {string} className
 */
const collapsible = (summary, text, className) =>
  el(
    "details",
    { className },
    el("summary", null, summary),
    text === undefined
      ? el("p", { className: "muted" }, "not recorded (metadata-only recording)")
      : el("pre", { className: "data" }, text)
  )

/**
 * @param {ModelCall} call
 * @param {number} index
 * @returns {HTMLElement}
 */
const callView = (call, index) =>
  el(
    "div",
    { className: "model-call card", attrs: { "data-call": String(index) } },
    el(
      "div",
      { className: "card-head" },
      el(
        "span",
        { className: "hook-name" },
        `${call.purpose}${call.phase === undefined ? "" : ` · phase ${call.phase}`}`
      ),
      " ",
      el("span", { className: statusClass(call.outcome) }, call.outcome),
      el(
        "span",
        { className: "muted" },
        ` · ${call.model}${
          call.modelId === undefined ? "" : ` (${call.modelId})`
        } · re-ask ${call.reask} · attempt ${call.attempt}${call.streamed ? " · streamed" : ""}`
      )
    ),
    el(
      "div",
      { className: "field" },
      el("span", { className: "label" }, "Timing"),
      ` ${time(call.startedAt)} · ${duration(call.durationMs)}`
    ),
    el("div", { className: "field" }, el("span", { className: "label" }, "Tokens"), ` ${tokens(call.usage)}`),
    call.error === undefined
      ? null
      : el(
        "div",
        { className: "field" },
        el("span", { className: "label" }, "Error"),
        " ",
        el("span", { className: "error-text" }, call.error)
      ),
    collapsible("Prompt", call.prompt, "prompt"),
    collapsible("Raw output", call.output, "raw-output")
  )

/**
 * Fills `container` with the model calls.
 *
 * @param {HTMLElement} container
 * @param {ReadonlyArray<ModelCall> | undefined} calls
 */
export const renderCalls = (container, calls) => {
  fill(
    container,
    calls === undefined || calls.length === 0
      ? el("p", { className: "muted" }, "No model calls recorded.")
      : calls.map(callView)
  )
}

/**
 * @typedef {{ readonly rawDraft?: string, readonly finalResponse?: string, readonly deliveredText?: string }} Responses
 */

/**
 * Fills `container` with the raw draft, the delivered text (streaming) and the final response.
 *
 * @param {HTMLElement} container
 * @param {Responses} record
 */
export const renderResponse = (container, record) => {
  const block = (
    /** @type {string} */ title,
    /** @type {string | undefined} */ text,
    /** @type {string} */ className
  ) =>
    el(
      "div",
      { className: `response ${className}` },
      el("h4", null, title),
      text === undefined ? el("p", { className: "muted" }, "none") : el("pre", { className: "data" }, text)
    )
  fill(
    container,
    block("Final response", record.finalResponse, "final-response"),
    block("Model's raw draft", record.rawDraft, "raw-draft"),
    record.deliveredText === undefined
      ? null
      : block("Delivered to the client (stream)", record.deliveredText, "delivered")
  )
}
