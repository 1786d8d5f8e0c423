/**
 * A model response a `before_inference` transform served (`Hook.respond`):
 * the signal the transform chain stops with, for the operation combinator
 * to skip the model call and run the `after_inference` transforms on it.
 * Internal: it never leaves the runtime.
 */

/** The response `hookName` served. */
export class Served {
  constructor(readonly text: string, readonly hookName: string) {}
}

/** Whether a failure is a served response. */
export const isServed = (u: unknown): u is Served => u instanceof Served
