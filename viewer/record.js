// @ts-check
/**
 * What the detail page reads of an execution record (its encoded form, as
 * `GET /v1/records/{id}` returns it), and how hook runs are grouped: the
 * four stages by name, every other point (around / guard / transform of an
 * operation) as an operation-hook run.
 */

/**
 * @typedef {import("./hooks.js").HookInvocation} HookInvocation
 * @typedef {import("./steps.js").PhaseRecord} PhaseRecord
 * @typedef {import("./calls.js").ModelCall} ModelCall
 * @typedef {{ readonly status: string, readonly startedAt: number, readonly endedAt?: number, readonly errorTag?: string, readonly errorMessage?: string, readonly owner?: string, readonly leaseExpiresAt?: number }} Lifecycle
 * @typedef {{ readonly hookName: string, readonly kind: string, readonly reason: string, readonly source?: string }} ShortCircuit
 * @typedef {{ readonly schemaVersion?: number, readonly requestId: string, readonly record_revision?: number, readonly mode?: string, readonly request: string, readonly metadata?: Record<string, unknown>, readonly lifecycle?: Lifecycle, readonly phases?: ReadonlyArray<PhaseRecord>, readonly hookInvocations?: ReadonlyArray<HookInvocation>, readonly shortCircuit?: ShortCircuit, readonly checkpointId?: string, readonly rawDraft?: string, readonly modelCalls?: ReadonlyArray<ModelCall>, readonly deliveredText?: string, readonly finalResponse?: string, readonly diagnostics?: ReadonlyArray<string>, readonly traceId?: string }} ExecutionRecord
 */

export const STAGES = /** @type {const} */ (["before_planning", "after_planning", "after_execution", "after_synthesis"])

/**
 * The request's completion: its lifecycle status, or `unknown` for a legacy record.
 *
 * @param {ExecutionRecord} record
 * @returns {string}
 */
export const completion = (record) => record.lifecycle?.status ?? "unknown"

/**
 * The hook runs at one point of the lifecycle.
 *
 * @param {ExecutionRecord} record
 * @param {string} stage
 * @returns {ReadonlyArray<HookInvocation>}
 */
export const atStage = (record, stage) => (record.hookInvocations ?? []).filter((i) => i.stage === stage)

/**
 * The hook runs at operation points (not one of the four stages).
 *
 * @param {ExecutionRecord} record
 * @returns {ReadonlyArray<HookInvocation>}
 */
export const operationRuns = (record) =>
  (record.hookInvocations ?? []).filter((i) => !(/** @type {ReadonlyArray<string>} */ (STAGES)).includes(i.stage))

/**
 * The trace id of the request, when the record (or its metadata) carries one.
 *
 * @param {ExecutionRecord} record
 * @returns {string | undefined}
 */
export const traceIdOf = (record) => {
  const candidates = [record.traceId, record.metadata?.traceId, record.metadata?.trace_id]
  for (const candidate of candidates) if (typeof candidate === "string" && candidate !== "") return candidate
  return undefined
}

/**
 * The trace link: the template with `{traceId}` replaced (URL-encoded), when
 * the result is an `http:` or `https:` URL.
 *
 * @param {string | undefined} template
 * @param {string | undefined} traceId
 * @returns {string | undefined}
 */
export const traceLink = (template, traceId) => {
  if (template === undefined || traceId === undefined || !template.includes("{traceId}")) return undefined
  const href = template.split("{traceId}").join(encodeURIComponent(traceId))
  try {
    const url = new URL(href)
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined
  } catch {
    return undefined
  }
}

/**
 * @param {unknown} body
 * @returns {ExecutionRecord | undefined}
 */
export const asRecord = (body) =>
  typeof body === "object" && body !== null &&
    typeof (/** @type {{ requestId?: unknown }} */ (body)).requestId === "string"
    ? /** @type {ExecutionRecord} */ (body)
    : undefined
