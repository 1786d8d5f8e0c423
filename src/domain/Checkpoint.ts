/**
 * A HITL checkpoint: a request suspended before a phase's plan executes,
 * with everything needed to resume it (DESIGN §4 step 5), bound to what the
 * human approves (DESIGN §7 "an approval binds to what was approved"):
 *
 * - `planDigest` is the hex SHA-256 of the plan's canonical JSON text
 *   ({@link planText}) — the plan the required boundary accepted and the
 *   approver is shown. An approver (a server) echoes it back on resume.
 * - `mac` is an HMAC-SHA256, with the agent's checkpoint key, over the
 *   canonical JSON text of every other field ({@link sealedText}): the
 *   request, its metadata and enrichments, the earlier phases, the phase and
 *   the digest are bound as well, so no part of a stored checkpoint can be
 *   rewritten without the resume noticing.
 *
 * This module is data only; the digest and the MAC are computed by the
 * `CheckpointKey` service (`stores/CheckpointKey.ts`).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { PhaseRecord } from "./ExecutionRecord.js"
import * as CanonicalJson from "./internal/canonicalJson.js"
import { JsonObject } from "./Json.js"
import { RoutingPlan } from "./RoutingPlan.js"

/**
 * A SHA-256 digest or HMAC, as 64 lowercase hex digits.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Approval } from "effect-agent-pipeline"
 *
 * // What a server checks an echoed `planDigest` with before passing it on.
 * const isDigest = Schema.is(Approval.HexDigest)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const HexDigest = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{64}$/, { message: () => "expected 64 lowercase hex digits (a SHA-256 digest)" })
).annotations({ identifier: "HexDigest" })

/** What a checkpoint holds before it is sealed. */
const unsealedFields = {
  checkpointId: Schema.String,
  requestId: Schema.String,
  request: Schema.String,
  metadata: JsonObject,
  /** The request-start enrichment snapshot. */
  enrichments: JsonObject,
  phase: Schema.Int,
  /** The approved-pending plan (already through AfterPlanning). */
  plan: RoutingPlan,
  /** Phases completed before the suspension. */
  priorPhases: Schema.Array(PhaseRecord),
  reason: Schema.String,
  createdAt: Schema.Finite
}

/**
 * What the MAC covers: every field of a checkpoint but the MAC itself.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Approval } from "effect-agent-pipeline"
 *
 * // The fields a checkpoint is sealed from, decoded from their wire form.
 * const decodeUnsealed = Schema.decodeUnknownSync(Approval.Sealed.omit("planDigest"))
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Sealed = Schema.Struct({
  ...unsealedFields,
  /** Hex SHA-256 of the plan's canonical JSON text: what the approver saw. */
  planDigest: HexDigest
}).annotations({ identifier: "SealedCheckpoint" })

/**
 * The fields a checkpoint is made of, before `CheckpointKey` seals it
 * (computes `planDigest` and `mac`).
 *
 * @example
 * ```ts
 * import type { Approval } from "effect-agent-pipeline"
 *
 * const describe = (fields: Approval.Unsealed) => `${fields.requestId} phase ${fields.phase}: ${fields.reason}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Unsealed = Schema.Struct.Type<typeof unsealedFields>

/**
 * A suspended request: everything needed to resume it, its plan's digest
 * and the MAC that binds them.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Pipeline } from "effect-agent-pipeline"
 *
 * // Show the approver the plan and its digest; resume with the digest they saw.
 * const program = Effect.gen(function*() {
 *   const pipeline = yield* Pipeline.Pipeline
 *   const result = yield* pipeline.process({ request: "Buy 10 shares of ACME stock" })
 *   if (result._tag !== "Suspended") return result
 *   const { checkpointId, plan, planDigest } = result.checkpoint
 *   console.log(JSON.stringify(plan.steps), planDigest)
 *   return yield* pipeline.resume(checkpointId, "approve", { planDigest })
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Checkpoint extends Schema.Class<Checkpoint>("effect-agent-pipeline/Checkpoint")({
  ...Sealed.fields,
  /** HMAC-SHA256 (hex) with the agent's checkpoint key over {@link sealedText}. */
  mac: HexDigest
}) {}

const encodePlan = Schema.encodeSync(RoutingPlan)
const encodeSealed = Schema.encodeSync(Sealed)

/**
 * The canonical JSON text of a plan's encoded (wire) form: what
 * `planDigest` is the SHA-256 of.
 *
 * @example
 * ```ts
 * import { Approval } from "effect-agent-pipeline"
 *
 * Approval.planText({ steps: [], terminal: true }) // '{"steps":[],"terminal":true}'
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const planText = (plan: RoutingPlan): string => CanonicalJson.stringify(encodePlan(plan))

/**
 * The canonical JSON text of a checkpoint's encoded form without its `mac`:
 * what the MAC is computed over. A checkpoint and its JSON round trip
 * (`encode` → `JSON.stringify` → `JSON.parse` → `decode`) have the same text.
 *
 * @example
 * ```ts
 * import { Approval } from "effect-agent-pipeline"
 *
 * const sameContent = (a: Approval.Checkpoint, b: Approval.Checkpoint) =>
 *   Approval.sealedText(a) === Approval.sealedText(b)
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const sealedText = (checkpoint: typeof Sealed.Type): string => CanonicalJson.stringify(encodeSealed(checkpoint))
