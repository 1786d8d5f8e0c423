// @ts-check
/**
 * A suspended request: the plan waiting at its checkpoint, and (unless the
 * server is read-only) Approve / Reject buttons. The plan comes from
 * `GET /v1/checkpoints/{id}`; the viewer computes its digest itself and
 * shows the buttons only when that digest is the one the server holds — so
 * the `planDigest` a decision echoes is the digest of the plan on screen,
 * and a resume for any other plan is refused by the server.
 */
import { ApiFailure, getJson, postJson } from "./api.js"
import { planDigest } from "./digest.js"
import { el, fill } from "./dom.js"
import { planView } from "./steps.js"

/**
 * @typedef {import("./steps.js").RoutingPlan} RoutingPlan
 * @typedef {{ readonly checkpointId?: string, readonly phase?: number, readonly reason?: string, readonly plan: RoutingPlan, readonly planDigest?: string }} PendingCheckpoint
 */

/**
 * @param {unknown} body
 * @returns {PendingCheckpoint | undefined}
 */
const asCheckpoint = (body) => {
  if (typeof body !== "object" || body === null) return undefined
  const value = /** @type {Record<string, unknown>} */ (body)
  const plan = /** @type {RoutingPlan | undefined} */ (value.plan)
  if (typeof plan !== "object" || plan === null || !Array.isArray(plan.steps)) return undefined
  return /** @type {PendingCheckpoint} */ (value)
}

/**
 * Fills `container` with the checkpoint's plan and its decision buttons.
 *
 * @param {HTMLElement} container
 * @param {{ readonly checkpointId: string, readonly readOnly: boolean, readonly onResumed: (result: unknown) => void }} options
 * @returns {Promise<void>}
 */
export const renderApproval = async (container, options) => {
  fill(container, el("p", { className: "muted" }, "Loading the plan waiting for approval…"))
  /** @type {PendingCheckpoint | undefined} */
  let checkpoint
  try {
    checkpoint = asCheckpoint(await getJson(`/v1/checkpoints/${encodeURIComponent(options.checkpointId)}`))
  } catch (error) {
    const text = error instanceof ApiFailure && error.status === 404
      ? "The checkpoint is gone (resumed, expired) or this server does not serve checkpoints."
      : `The checkpoint could not be read: ${error instanceof Error ? error.message : String(error)}`
    fill(container, el("p", { className: "error-text" }, text))
    return
  }
  if (checkpoint === undefined) {
    fill(container, el("p", { className: "error-text" }, "The server answered without a plan."))
    return
  }
  const digest = planDigest(checkpoint.plan)
  const matches = checkpoint.planDigest === undefined || checkpoint.planDigest === digest
  const status = el("p", { className: "approval-status", attrs: { role: "status" } })
  const button = (/** @type {"approve" | "reject"} */ decision, /** @type {string} */ label) => {
    const b = el(
      "button",
      { className: `decide ${decision}`, attrs: { type: "button", "data-decision": decision } },
      label
    )
    b.addEventListener("click", () => {
      for (const other of buttons) other.disabled = true
      fill(status, decision === "approve" ? "Approving…" : "Rejecting…")
      postJson(`/v1/checkpoints/${encodeURIComponent(options.checkpointId)}/resume`, { decision, planDigest: digest })
        .then((result) => {
          const tag = typeof result === "object" && result !== null && "_tag" in result ? String(result._tag) : "done"
          fill(status, `${decision === "approve" ? "Approved" : "Rejected"}: ${tag}.`)
          options.onResumed(result)
        })
        .catch((/** @type {unknown} */ error) => {
          fill(
            status,
            el(
              "span",
              { className: "error-text" },
              `Refused: ${error instanceof Error ? error.message : String(error)}`
            )
          )
          for (const other of buttons) other.disabled = false
        })
    })
    return b
  }
  const buttons = options.readOnly || !matches ? [] : [button("approve", "Approve"), button("reject", "Reject")]
  fill(
    container,
    el(
      "p",
      null,
      el("span", { className: "label" }, "Waiting for a human"),
      checkpoint.reason === undefined ? "" : `: ${checkpoint.reason}`,
      checkpoint.phase === undefined ? "" : ` (phase ${checkpoint.phase})`
    ),
    planView(checkpoint.plan, () => "pending"),
    el("p", { className: "digest" }, el("span", { className: "label" }, "Plan digest"), " ", el("code", null, digest)),
    matches
      ? null
      : el(
        "p",
        { className: "error-text" },
        "The digest of the plan shown is not the checkpoint's: no decision can be made from this page."
      ),
    options.readOnly
      ? el("p", { className: "muted" }, "Read-only viewer: decisions are made where the agent runs.")
      : el("div", { className: "decisions" }, buttons),
    status
  )
}
