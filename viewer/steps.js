// @ts-check
/**
 * A request's phases: each accepted plan as a DAG, and each step's tool
 * call — its input (the plan step's parameters), status, timing, output or
 * error.
 */
import { renderDag } from "./dag.js"
import { el, fill, json } from "./dom.js"
import { duration, statusClass } from "./format.js"

/**
 * @typedef {{ readonly step_id: string, readonly namespace: string, readonly agent: string, readonly capability: string, readonly parameters?: unknown, readonly depends_on?: ReadonlyArray<string>, readonly implicit_deps?: ReadonlyArray<string>, readonly metadata?: unknown }} RoutingStep
 * @typedef {{ readonly steps: ReadonlyArray<RoutingStep>, readonly terminal?: boolean, readonly reasoning?: string }} RoutingPlan
 * @typedef {{ readonly step_id: string, readonly namespace: string, readonly agent: string, readonly capability: string, readonly status: string, readonly output?: unknown, readonly error?: string, readonly startedAt: number, readonly duration: number }} StepResult
 * @typedef {{ readonly phase: number, readonly plan: RoutingPlan, readonly steps?: ReadonlyArray<StepResult>, readonly running?: ReadonlyArray<string> }} PhaseRecord
 */

/**
 * A plan's DAG with its steps' statuses.
 *
 * @param {RoutingPlan} plan
 * @param {(stepId: string) => string | undefined} statusOf
 * @returns {HTMLElement}
 */
export const planView = (plan, statusOf) =>
  el(
    "div",
    { className: "plan" },
    plan.reasoning === undefined
      ? null
      : el("p", { className: "reasoning" }, el("span", { className: "label" }, "Reasoning"), " ", plan.reasoning),
    el(
      "div",
      { className: "dag-scroll" },
      /** @type {Node} */ (/** @type {unknown} */ (renderDag(plan.steps, statusOf)))
    ),
    el(
      "p",
      { className: "muted" },
      plan.terminal === false ? "Not terminal: the planner planned again after these results." : "Terminal plan."
    )
  )

/**
 * @param {PhaseRecord} phase
 * @returns {HTMLElement}
 */
const phaseView = (phase) => {
  const results = new Map((phase.steps ?? []).map((s) => [s.step_id, s]))
  const running = new Set(phase.running ?? [])
  const statusOf = (/** @type {string} */ id) => (running.has(id) ? "running" : results.get(id)?.status)
  const rows = phase.plan.steps.map((step) => {
    const result = results.get(step.step_id)
    const status = statusOf(step.step_id) ?? "not run"
    return el(
      "tr",
      { attrs: { "data-step-id": step.step_id } },
      el("td", null, el("code", null, step.step_id)),
      el("td", null, `${step.namespace} / ${step.agent} / ${step.capability}`),
      el("td", null, el("span", { className: statusClass(status) }, status)),
      el("td", { className: "nowrap" }, result === undefined ? "—" : duration(result.duration)),
      el("td", null, el("pre", { className: "data tool-input" }, json(step.parameters ?? {}))),
      el(
        "td",
        null,
        result?.error === undefined ? null : el("pre", { className: "data error-text" }, result.error),
        result?.output === undefined ? null : el("pre", { className: "data tool-output" }, json(result.output))
      )
    )
  })
  return el(
    "section",
    { className: "phase", attrs: { "data-phase": String(phase.phase) } },
    el("h3", null, `Phase ${phase.phase}`),
    planView(phase.plan, statusOf),
    el(
      "table",
      { className: "tools" },
      el(
        "thead",
        null,
        el("tr", null, ["Step", "Tool", "Status", "Duration", "Input", "Output"].map((h) => el("th", null, h)))
      ),
      el("tbody", null, rows)
    )
  )
}

/**
 * Fills `container` with every phase.
 *
 * @param {HTMLElement} container
 * @param {ReadonlyArray<PhaseRecord>} phases
 */
export const renderPhases = (container, phases) => {
  fill(
    container,
    phases.length === 0 ? el("p", { className: "muted" }, "No accepted plan (no tools ran).") : phases.map(phaseView)
  )
}
