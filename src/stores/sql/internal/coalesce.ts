/**
 * Superseded writes within one batch (issue 20): a request that ends
 * before its `create` was written — its create and its final save in one
 * batch, one commit — is one row written, not two. The pair becomes one
 * `create` of the save's columns (with the create's write time, so the
 * create's own condition — no live row holds the id — decides it), and the
 * row ends as the two writes in turn would have left it:
 *
 * - only a create followed by the same id's save, its only two writes in
 *   the batch, a later revision;
 * - only where the save would have replaced the created row without a
 *   merge: that row has no hook runs, or is the same writer's snapshot;
 * - when the create is refused (a live row holds the id), the save is
 *   written on its own afterwards, in the same batch, and answered by that.
 *
 * Nothing is written later than it would have been: both writes were to
 * commit together.
 */
import { Effect, Exit } from "effect"
import { ExecutionStoreError } from "../../contract/ExecutionStore.js"
import type { RowWrite } from "./rowWrite.js"

/** A batch's writes, pairs folded into one. */
export interface Coalesced {
  /** What to write: each write of the batch, a create and its save as one create. */
  readonly writes: ReadonlyArray<RowWrite>
  /**
   * The answers of the batch's writes in their order, from the answers of
   * `writes` — writing on its own each save whose folded create was refused.
   */
  readonly answer: (
    exits: ReadonlyArray<Exit.Exit<boolean, ExecutionStoreError>>,
    writeAlone: (save: RowWrite) => Effect.Effect<Exit.Exit<boolean, ExecutionStoreError>>
  ) => Effect.Effect<ReadonlyArray<Exit.Exit<boolean, ExecutionStoreError>>>
}

/** Whether `save`, right after `create` wrote its row, would replace it without a merge. */
const replacesCreated = (create: RowWrite, save: RowWrite): boolean =>
  create.columns.revision < save.columns.revision &&
  (create.columns.hookNames === "[]" ||
    (create.columns.writer !== null && create.columns.writer === save.columns.writer))

const unchanged = (writes: ReadonlyArray<RowWrite>): Coalesced => ({
  writes,
  answer: (exits) => Effect.succeed(exits)
})

/** Folds each create and the same id's save after it into one write, where that writes the same row. */
export const coalesce = (writes: ReadonlyArray<RowWrite>): Coalesced => {
  if (writes.length < 2) return unchanged(writes)
  // Per id: the positions of its writes (the pairs have exactly two).
  const positions = new Map<string, Array<number>>()
  writes.forEach((write, i) => {
    const known = positions.get(write.columns.requestId)
    if (known === undefined) positions.set(write.columns.requestId, [i])
    else known.push(i)
  })
  // For each folded save, the position of its create.
  const foldedInto = new Map<number, number>()
  for (const [, at] of positions) {
    if (at.length !== 2) continue
    const create = writes[at[0]!]!
    const save = writes[at[1]!]!
    if (create.kind === "create" && save.kind === "save" && replacesCreated(create, save)) {
      foldedInto.set(at[1]!, at[0]!)
    }
  }
  if (foldedInto.size === 0) return unchanged(writes)
  const folded: Array<RowWrite> = []
  // Where each write's answer is in `folded`.
  const slot: Array<number> = new Array(writes.length)
  const createAt = new Map<number, number>()
  for (const [saveAt, at] of foldedInto) createAt.set(at, saveAt)
  writes.forEach((write, i) => {
    if (foldedInto.has(i)) return
    const saveAt = createAt.get(i)
    slot[i] = folded.length
    folded.push(
      saveAt === undefined
        ? write
        // The save's row, written when and where the create would have been.
        : { kind: "create", columns: { ...writes[saveAt]!.columns, storedAt: write.columns.storedAt } }
    )
  })
  for (const [saveAt, at] of foldedInto) slot[saveAt] = slot[at]!
  return {
    writes: folded,
    answer: (exits, writeAlone) =>
      Effect.forEach(writes, (write, i) => {
        const exit = exits[slot[i]!]!
        if (!foldedInto.has(i)) return Effect.succeed(exit)
        // The create was refused: the save, on its own, over the row that holds the id.
        if (Exit.isSuccess(exit)) return exit.value ? Effect.succeed(exit) : writeAlone(write)
        // The pair's failure, as the save's own.
        return Effect.succeed(Exit.mapError(
          exit,
          (error) => new ExecutionStoreError({ operation: "save", detail: error.detail, cause: error.cause })
        ))
      })
  }
}
