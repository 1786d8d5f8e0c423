/**
 * The CheckpointStore contract: the service tag, its decode error and the
 * claim model. Every backend — `memory/`, `sql/` — implements it; users
 * reach it through the `CheckpointStore` namespace (`stores/CheckpointStore.ts`),
 * which adds the in-memory backend. Kept apart from that namespace so the
 * in-memory backend can import the contract without an import cycle.
 */
import { Context, Data, type Duration, type Effect, type Option, Schema } from "effect"
import type { Checkpoint } from "../../domain/Checkpoint.js"
import { id, TypeId } from "../../domain/ErrorId.js"
import type { ExecutionStoreError } from "./ExecutionStore.js"

/**
 * A stored checkpoint that does not decode: its body is not JSON or not a
 * checkpoint (rewritten by hand, corrupt, or written by another version).
 * `requestId` is the request the store filed it under, when it knows. The
 * store never hands it out and never leaves it claimed.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { CheckpointStore } from "effect-agent-pipeline"
 *
 * const peek = (checkpointId: string) =>
 *   Effect.flatMap(CheckpointStore.CheckpointStore, (store) => store.get(checkpointId)).pipe(
 *     Effect.catchTag("CheckpointDecodeError", (e) => Effect.succeed(`unusable: ${e.detail}`))
 *   )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class CheckpointDecodeError extends Schema.TaggedError<CheckpointDecodeError>(id("CheckpointDecodeError"))(
  "CheckpointDecodeError",
  {
    checkpointId: Schema.String,
    requestId: Schema.optional(Schema.String),
    detail: Schema.String
  }
) {
  /**
   * Marks the error as one of this library's.
   *
   * @since 0.1.0
   * @category type ids
   */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `stored checkpoint ${this.checkpointId} does not decode: ${this.detail}`
  }
}

/**
 * A held claim: who holds it and until when its lease runs (epoch
 * milliseconds, from the `Clock`). The lease holds while `now < expiresAt`.
 *
 * @example
 * ```ts
 * import type { CheckpointStore } from "effect-agent-pipeline"
 *
 * const holds = (claim: CheckpointStore.Claim, now: number) => now < claim.expiresAt
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Claim {
  readonly owner: string
  readonly expiresAt: number
}

/**
 * What a claim asks for: who claims (a name unique to this claimant: the
 * pipeline uses its own id and the resume's number), and for how long.
 *
 * @example
 * ```ts
 * import { Duration } from "effect"
 * import type { CheckpointStore } from "effect-agent-pipeline"
 *
 * const options: CheckpointStore.ClaimOptions = { owner: "worker-1/42", leaseFor: Duration.minutes(5) }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ClaimOptions {
  readonly owner: string
  readonly leaseFor: Duration.DurationInput
}

/**
 * What `claim` found: the checkpoint, now claimed by the caller; no such
 * checkpoint (unknown, or already completed); or someone else's live claim
 * (its owner, and when its lease runs out).
 *
 * @example
 * ```ts
 * import { CheckpointStore } from "effect-agent-pipeline"
 *
 * const describe = (result: CheckpointStore.ClaimResult) =>
 *   CheckpointStore.ClaimResult.$match(result, {
 *     Claimed: ({ checkpoint, claim }) => `${checkpoint.checkpointId} is ours until ${claim.expiresAt}`,
 *     NotFound: () => "no such checkpoint",
 *     AlreadyClaimed: ({ expiresAt, owner }) => `${owner} holds it until ${expiresAt}`
 *   })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ClaimResult = Data.TaggedEnum<{
  Claimed: { readonly checkpoint: Checkpoint; readonly claim: Claim }
  NotFound: {}
  AlreadyClaimed: { readonly owner: string; readonly expiresAt: number }
}>

/**
 * Constructors and matchers of {@link ClaimResult}.
 *
 * @example
 * ```ts
 * import { CheckpointStore } from "effect-agent-pipeline"
 *
 * const busy = CheckpointStore.ClaimResult.AlreadyClaimed({ owner: "worker-2", expiresAt: 1_700_000_000_000 })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const ClaimResult = Data.taggedEnum<ClaimResult>()

/**
 * The checkpoint store service.
 *
 * @example
 * ```ts
 * import { Duration, Effect } from "effect"
 * import { CheckpointStore } from "effect-agent-pipeline"
 *
 * // Resume once: claim, do the work, then complete (or release on failure).
 * const resumeOnce = (checkpointId: string, work: Effect.Effect<void>) =>
 *   Effect.gen(function*() {
 *     const store = yield* CheckpointStore.CheckpointStore
 *     const owner = "worker-1"
 *     const claimed = yield* store.claim(checkpointId, { owner, leaseFor: Duration.minutes(5) })
 *     if (claimed._tag !== "Claimed") return claimed._tag
 *     yield* work.pipe(
 *       Effect.onExit((exit) =>
 *         Effect.orDie(exit._tag === "Success" ? store.complete(checkpointId, owner) : store.release(checkpointId, owner))
 *       )
 *     )
 *     return "done"
 *   })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class CheckpointStore extends Context.Tag("effect-agent-pipeline/CheckpointStore")<
  CheckpointStore,
  CheckpointStore.Service
>() {}

/**
 * The types that go with the {@link CheckpointStore} tag.
 *
 * @since 0.1.0
 * @category services
 */
export declare namespace CheckpointStore {
  /**
   * What every backend implements.
   *
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    /** Stores a checkpoint, unclaimed (replacing one with the same id, and any claim on it). */
    readonly save: (checkpoint: Checkpoint) => Effect.Effect<void, ExecutionStoreError>
    /**
     * The checkpoint, claimed or not, until it is completed.
     * `CheckpointDecodeError` when the stored one does not decode.
     */
    readonly get: (
      checkpointId: string
    ) => Effect.Effect<Option.Option<Checkpoint>, ExecutionStoreError | CheckpointDecodeError>
    /**
     * Claims the checkpoint for `owner` until `now + leaseFor`, atomically:
     * `AlreadyClaimed` while another claim's lease holds (whoever asks, its
     * own owner included), `NotFound` when there is no such checkpoint.
     * A stored checkpoint that does not decode fails with
     * `CheckpointDecodeError` and is left unclaimed.
     */
    readonly claim: (
      checkpointId: string,
      options: ClaimOptions
    ) => Effect.Effect<ClaimResult, ExecutionStoreError | CheckpointDecodeError>
    /**
     * Deletes the checkpoint if `owner` holds its claim — the latest claim
     * is its own, even if the lease ran out, as long as nobody claimed it
     * since. Returns whether it did.
     */
    readonly complete: (checkpointId: string, owner: string) => Effect.Effect<boolean, ExecutionStoreError>
    /**
     * Frees the claim if `owner` holds it (as for `complete`), so the
     * checkpoint can be claimed again at once. Returns whether it did.
     */
    readonly release: (checkpointId: string, owner: string) => Effect.Effect<boolean, ExecutionStoreError>
  }
}
