// @ts-check
/**
 * Hook evidence: one card per hook run (name, point, status, outcome,
 * decision with its policy / action / reason or "not recorded", error,
 * enrichments it added) and, inside it, one card per effect keyed by its
 * effect id — a later snapshot with the same effect re-renders that card in
 * place, so an effect whose status changes never shows twice.
 */
import { el, fill, json, keyed } from "./dom.js"
import { decision, duration, statusClass, time } from "./format.js"

/**
 * @typedef {{ readonly policy: string, readonly action: string, readonly reason: string }} Decision
 * @typedef {{ readonly effectId: string, readonly name: string, readonly status: string, readonly data?: unknown, readonly startedAt?: number, readonly duration?: number, readonly summary?: string, readonly error?: string, readonly schemaVersion?: number }} HookEffect
 * @typedef {{ readonly name: string, readonly stage: string, readonly outcome: string, readonly status?: string, readonly sequence: number, readonly phase?: number, readonly operation?: string, readonly callId?: string, readonly stepId?: string, readonly execution?: string, readonly attempts?: number, readonly contributionHash?: string, readonly skipReason?: string, readonly startedAt: number, readonly duration: number, readonly error?: string, readonly abandoned?: boolean, readonly runId?: string, readonly decision?: Decision, readonly effects?: ReadonlyArray<HookEffect> }} HookInvocation
 */

/** The prefix of the effects the pipeline records for BeforePlanning enrichment changes. */
const ENRICHMENT = "planning_enrichment:"

/**
 * A hook run's identity across snapshots.
 *
 * @param {HookInvocation} invocation
 * @returns {string}
 */
export const invocationKey = (invocation) =>
  invocation.runId !== undefined
    ? `run:${invocation.runId}`
    : `${invocation.stage}|${invocation.phase ?? ""}|${invocation.sequence}|${invocation.name}|${
      invocation.callId ?? ""
    }`

/**
 * @param {HookEffect} effect
 * @returns {boolean}
 */
const isEnrichment = (effect) => effect.effectId.startsWith(ENRICHMENT)

/**
 * The enrichment an enrichment effect describes: key, operation and the value after it.
 *
 * @param {HookEffect} effect
 * @returns {{ readonly key: string, readonly operation: string, readonly value: unknown }}
 */
const enrichmentOf = (effect) => {
  const data =
    /** @type {Record<string, unknown>} */ (typeof effect.data === "object" && effect.data !== null ? effect.data : {})
  return {
    key: typeof data.key === "string" ? data.key : effect.effectId.slice(ENRICHMENT.length),
    operation: typeof data.operation === "string" ? data.operation : "",
    value: "after" in data ? data.after : data.before
  }
}

/**
 * @param {string} label
 * @param {string | number | Node | null | undefined} value
 */
const field = (label, value) =>
  value === undefined || value === null || value === ""
    ? null
    : el("div", { className: "field" }, el("span", { className: "label" }, label), " ", value)

/**
 * Renders an effect card.
 *
 * @param {HookEffect} effect
 * @returns {(node: HTMLElement) => void}
 */
const renderEffect = (effect) => (node) => {
  node.className = "effect card"
  node.setAttribute("data-effect-id", effect.effectId)
  fill(
    node,
    el(
      "div",
      { className: "card-head" },
      el("span", { className: "effect-name" }, effect.name),
      " ",
      el("span", { className: `${statusClass(effect.status)} effect-status` }, effect.status),
      " ",
      el("code", { className: "muted" }, effect.effectId)
    ),
    field("Summary", effect.summary),
    field("Error", effect.error === undefined ? undefined : el("span", { className: "error-text" }, effect.error)),
    field("Started", time(effect.startedAt)),
    field("Duration", effect.duration === undefined ? undefined : duration(effect.duration)),
    effect.data === undefined ? null : el("pre", { className: "data" }, json(effect.data))
  )
}

/**
 * The outcome a run status implies (a record shows `outcome` apart only when it says something else).
 *
 * @param {string} status
 * @returns {string}
 */
const shortForm = (status) => {
  switch (status) {
    case "completed":
      return "succeeded"
    case "failed":
    case "timed_out":
    case "denied":
      return "failed"
    case "started":
    case "backgrounded":
      return "pending"
    default:
      return status
  }
}

/** @type {WeakMap<HTMLElement, { readonly body: HTMLElement, readonly effects: HTMLElement }>} */
const cardParts = new WeakMap()

/**
 * Renders a hook-run card into `node`, keeping its effects container (and
 * so its effect cards) across renders.
 *
 * @param {HookInvocation} invocation
 * @returns {(node: HTMLElement) => void}
 */
export const renderInvocation = (invocation) => (node) => {
  let parts = cardParts.get(node)
  if (parts === undefined) {
    parts = { body: el("div", { className: "card-body" }), effects: el("div", { className: "effects" }) }
    cardParts.set(node, parts)
    fill(node, parts.body, parts.effects)
  }
  const status = invocation.status ?? invocation.outcome
  const effects = invocation.effects ?? []
  const enrichments = effects.filter(isEnrichment).map(enrichmentOf)
  node.className = "invocation card"
  node.setAttribute("data-hook", invocation.name)
  node.setAttribute("data-stage", invocation.stage)
  fill(
    parts.body,
    el(
      "div",
      { className: "card-head" },
      el("span", { className: "hook-name" }, invocation.name),
      " ",
      el("span", { className: statusClass(status) }, status),
      invocation.status !== undefined && shortForm(invocation.status) !== invocation.outcome
        ? el("span", { className: "muted" }, ` outcome ${invocation.outcome}`)
        : null,
      el(
        "span",
        { className: "muted" },
        ` · ${invocation.stage}`,
        invocation.phase === undefined ? "" : ` · phase ${invocation.phase}`
      )
    ),
    el(
      "div",
      { className: "decision" },
      el("span", { className: "label" }, "Decision"),
      " ",
      el("span", {
        className: invocation.decision === undefined ? "not-recorded" : statusClass(invocation.decision.action)
      }, decision(invocation.decision))
    ),
    field(
      "Error",
      invocation.error === undefined ? undefined : el("span", { className: "error-text" }, invocation.error)
    ),
    field("Operation", invocation.operation),
    field("Step", invocation.stepId),
    field("Call", invocation.callId),
    field("Execution", invocation.execution),
    field("Attempts", invocation.attempts),
    field("Skipped", invocation.skipReason),
    field(
      "Abandoned",
      invocation.abandoned === true ? "yes: it ignored its interruption and was left behind" : undefined
    ),
    field(
      "Contribution",
      invocation.contributionHash === undefined ? undefined : el("code", null, invocation.contributionHash)
    ),
    field("Timing", `${time(invocation.startedAt)} · ${duration(invocation.duration)}`),
    enrichments.length === 0 ? null : el(
      "div",
      { className: "enrichments" },
      el("div", { className: "label" }, "Enrichments"),
      el(
        "dl",
        null,
        enrichments.flatMap((e) => [
          el("dt", null, e.key, e.operation === "" ? "" : ` (${e.operation})`),
          el("dd", null, el("pre", { className: "data" }, json(e.value)))
        ])
      )
    )
  )
  keyed(
    parts.effects,
    effects.filter((e) => !isEnrichment(e)).map((effect) => ({ key: effect.effectId, render: renderEffect(effect) }))
  )
}

/**
 * Fills `container` with the cards of `invocations` (in place), or `empty`
 * ("not recorded") when there are none.
 *
 * @param {HTMLElement} container
 * @param {ReadonlyArray<HookInvocation>} invocations
 * @param {string} [empty]
 */
export const renderInvocations = (container, invocations, empty = "not recorded") => {
  keyed(
    container,
    invocations.length === 0
      ? [{
        key: "(none)",
        render: (node) => {
          node.className = "not-recorded"
          fill(node, empty)
        }
      }]
      : invocations.map((invocation) => ({ key: invocationKey(invocation), render: renderInvocation(invocation) }))
  )
}
