/**
 * Group commit (issue 20, "durable recording must get fast"): writes that
 * many fibers submit while the database is busy are taken together and
 * written as one batch — one transaction, one commit — and each caller
 * waits for its own write's result only (or, with `submitDetached`, is
 * called back with it: no fiber waits).
 *
 * - Bounded: a batch holds at most `maxBatch` writes. No write waits for a
 *   timer: the first one goes at once, and the writes that arrive while
 *   batches are being written make the next one (so a write waits for at
 *   most the batches ahead of it).
 * - One batch at a time, writes in the order they were submitted: two
 *   writes of one row are never reordered. (Batches side by side on a
 *   PostgreSQL pool were measured too: no faster where the database's CPU
 *   is the limit, and they would reorder writes.)
 * - A caller interrupted while it waits only stops waiting: its write is
 *   written with its batch (as a statement already sent would be), and no
 *   other write is affected.
 * - The worker lives in the Scope it was made in; closing that Scope drains
 *   every write submitted so far, then stops it. Writes submitted after
 *   that fail with `closed()`.
 */
import { Effect, Exit, Fiber, type Scope } from "effect"

/**
 * Submits one write and waits for its own result.
 */
export interface GroupCommit<I, A, E> {
  readonly submit: (item: I) => Effect.Effect<A, E>
  /**
   * Submits one write now, with no fiber waiting for it: `onExit` gets its
   * result (called once, from the worker; it must not throw). Ordered with
   * `submit`'s writes as they are submitted.
   */
  readonly submitDetached: (item: I, onExit: (exit: Exit.Exit<A, E>) => void) => void
  /**
   * Waits until every write submitted so far is answered (at once when none
   * is pending): a read after it sees them — also the writes whose callers
   * do not wait for them.
   */
  readonly settled: Effect.Effect<void>
}

interface Pending<I, A, E> {
  readonly item: I
  readonly resume: (exit: Exit.Exit<A, E>) => void
}

/**
 * A group commit over `write`, which writes one batch and answers every
 * write in it: `exits[i]` is the result of `items[i]`. It never fails as a
 * whole; a defect in it fails each write of that batch with the defect.
 */
export const make = <I, A, E>(options: {
  readonly maxBatch: number
  readonly write: (items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<Exit.Exit<A, E>>>
  /** The failure of a write submitted after the Scope closed. */
  readonly closed: (item: I) => E
}): Effect.Effect<GroupCommit<I, A, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const maxBatch = Math.max(1, options.maxBatch)
    let pending: Array<Pending<I, A, E>> = []
    let closing = false
    let closed = false
    // Writes submitted and answered so far (in order: batches are FIFO), and who waits for `settled`.
    let submitted = 0
    let answered = 0
    let settling: Array<{ readonly upTo: number; readonly resume: () => void }> = []
    // Resumes the worker when it waits for work.
    let wake: (() => void) | undefined
    const idle = Effect.async<void>((resume) => {
      wake = () => {
        wake = undefined
        resume(Effect.void)
      }
    })

    /** The next batch: the oldest pending writes, at most `maxBatch`. */
    const take = (): Array<Pending<I, A, E>> => {
      if (pending.length <= maxBatch) {
        const batch = pending
        pending = []
        return batch
      }
      const batch = pending.slice(0, maxBatch)
      pending = pending.slice(maxBatch)
      return batch
    }

    const writeBatch = (batch: ReadonlyArray<Pending<I, A, E>>) =>
      Effect.map(Effect.exit(options.write(batch.map((p) => p.item))), (exit) => {
        for (let i = 0; i < batch.length; i++) {
          const result: Exit.Exit<A, E> = Exit.isSuccess(exit)
            ? exit.value[i] ?? Exit.die(new Error(`group commit: no result for write ${i} of ${batch.length}`))
            : Exit.failCause(exit.cause)
          batch[i]!.resume(result)
        }
        answered += batch.length
        if (settling.length > 0) {
          const waiting = settling
          settling = []
          for (const w of waiting) {
            if (w.upTo <= answered) w.resume()
            else settling.push(w)
          }
        }
      })

    const worker = Effect.gen(function*() {
      while (true) {
        const batch = take()
        if (batch.length === 0) {
          if (closing) return
          yield* idle
          continue
        }
        // A batch once taken is written and answered whole, even if the
        // worker is interrupted meanwhile: its callers are waiting on it.
        yield* Effect.uninterruptible(writeBatch(batch))
      }
    })

    const fiber = yield* Effect.forkScoped(worker)
    // Runs before the fork's own finalizer (finalizers run in reverse):
    // every write submitted so far is written before the worker stops.
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closing = true
        wake?.()
        return Fiber.await(fiber)
      }).pipe(
        Effect.ensuring(Effect.sync(() => {
          closed = true
          // Only an interrupted worker (its Scope torn down without this
          // drain) leaves writes behind: they fail, they do not hang.
          const left = pending
          pending = []
          for (const p of left) p.resume(Exit.fail(options.closed(p.item)))
          const waiting = settling
          settling = []
          for (const w of waiting) w.resume()
        }))
      )
    )

    const submit = (item: I): Effect.Effect<A, E> =>
      Effect.async<A, E>((resume) => {
        if (closed) {
          resume(Exit.fail(options.closed(item)))
          return
        }
        submitted++
        pending.push({ item, resume })
        wake?.()
      })

    const submitDetached = (item: I, onExit: (exit: Exit.Exit<A, E>) => void): void => {
      // A callback that throws must not stop the worker: the other writes of its batch are still answered.
      const resume = (exit: Exit.Exit<A, E>) => {
        try {
          onExit(exit)
        } catch {
          // Nothing to do: the caller was told `onExit` must not throw.
        }
      }
      if (closed) return resume(Exit.fail(options.closed(item)))
      submitted++
      pending.push({ item, resume })
      wake?.()
    }

    const settled = Effect.suspend(() => {
      const upTo = submitted
      if (closed || answered >= upTo) return Effect.void
      return Effect.async<void>((resume) => {
        settling.push({ upTo, resume: () => resume(Effect.void) })
      })
    })

    return { submit, submitDetached, settled }
  })
