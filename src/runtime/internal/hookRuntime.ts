/**
 * The hook runtime as a service: the operations engine every model call,
 * tool call, retrieval and memory access goes through, and the pool that
 * detached hook runs live in. The hooks Layer (`PipelineHooks.layer`) builds
 * it from the registered hooks; the planner, the synthesizer, the executor
 * and the seams reach hooks only through it (DESIGN §6).
 */
import { Context } from "effect"
import type { Operations } from "../Operations.js"
import type { Detach } from "./invoke.js"

/**
 * The runtime service.
 *
 * @since 0.1.0
 * @category services
 */
export class HookRuntime extends Context.Tag("effect-agent-pipeline/HookRuntime")<HookRuntime, HookRuntime.Service>() {}

/**
 * The types of the {@link HookRuntime} service.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace HookRuntime {
  /**
   * What the hook runtime provides: the operations hooks observe and the pool that starts detached runs.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    readonly operations: Operations
    /** Starts detached hook runs in the runtime's pool. */
    readonly detach: Detach
  }
}
