// @ts-check
/**
 * How the viewer writes times, durations, statuses and decisions.
 */

/**
 * An epoch-millisecond time as local date and time, or "—".
 *
 * @param {number | undefined} millis
 * @returns {string}
 */
export const time = (millis) => {
  if (typeof millis !== "number" || !Number.isFinite(millis)) return "—"
  const date = new Date(millis)
  const pad = (/** @type {number} */ n, width = 2) => String(n).padStart(width, "0")
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${
    pad(date.getMinutes())
  }:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`
}

/**
 * A duration in milliseconds, readable: `0.42 ms`, `12 ms`, `3.2 s`.
 *
 * @param {number | undefined} millis
 * @returns {string}
 */
export const duration = (millis) => {
  if (typeof millis !== "number" || !Number.isFinite(millis)) return "—"
  if (millis < 1) return `${millis.toFixed(2)} ms`
  if (millis < 1000) return `${Math.round(millis)} ms`
  if (millis < 60_000) return `${(millis / 1000).toFixed(1)} s`
  return `${Math.floor(millis / 60_000)} min ${Math.round((millis % 60_000) / 1000)} s`
}

/**
 * The CSS class of a status badge (a fixed set: an unknown status is "other").
 *
 * @param {string} status
 * @returns {string}
 */
export const statusClass = (status) => {
  switch (status) {
    case "succeeded":
    case "completed":
    case "continue":
      return "badge ok"
    case "failed":
    case "timed_out":
    case "abandoned":
    case "terminate":
    case "propagate_panic":
      return "badge bad"
    case "denied":
    case "rejected":
    case "deny":
    case "interrupted":
      return "badge refused"
    case "running":
    case "pending":
    case "started":
    case "backgrounded":
      return "badge live"
    case "suspended":
    case "short_circuit":
      return "badge held"
    default:
      return "badge"
  }
}

/**
 * A decision as `policy / action / reason`, or "not recorded" when the
 * record has none (a missing decision is never "succeeded").
 *
 * @param {{ readonly policy: string, readonly action: string, readonly reason: string } | undefined} decision
 * @returns {string}
 */
export const decision = (decision) =>
  decision === undefined ? "not recorded" : `${decision.policy} / ${decision.action} / ${decision.reason}`

/**
 * The text of a `datetime-local` input as epoch milliseconds (undefined when empty or invalid).
 *
 * @param {string} value
 * @returns {number | undefined}
 */
export const fromLocalInput = (value) => {
  if (value === "") return undefined
  const millis = new Date(value).getTime()
  return Number.isFinite(millis) ? millis : undefined
}
