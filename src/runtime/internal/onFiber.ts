/**
 * What a transform chain and an observation read from the fiber they run on.
 */
import type { Clock } from "effect"
import type { RuntimeFiber } from "effect/Fiber"
import { currentInvocation, type InvocationSlot, sharedSlot } from "../HookEffects.js"
import type { RequestRecorder } from "./requestRecorder.js"
import { collects } from "./spans.js"
import { clockOf } from "./timing.js"

/** The fiber-dependent state of a transform chain or an observation. */
export abstract class OnFiber {
  /** Which participants completed, by position. */
  readonly completed: Array<boolean> = []
  /** No span is collected: `Hook.sync` handlers may take the synchronous path. */
  readonly fast: boolean
  readonly clock: Clock.Clock
  // The fiber's effect-reporting slot, switched around an Effect handler on
  // the lean path (a fiber without its own slot takes the full path).
  readonly slot: InvocationSlot | undefined
  readonly lean: boolean

  constructor(recorder: RequestRecorder, fiber: RuntimeFiber<unknown, unknown>) {
    this.fast = !collects(fiber)
    this.clock = clockOf(fiber)
    this.slot = recorder.enabled ? fiber.getFiberRef(currentInvocation) : undefined
    this.lean = this.fast && this.slot !== sharedSlot
  }
}
