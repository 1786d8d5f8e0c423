/**
 * The `progress` events of `POST /v1/requests/stream` (issue 21): what
 * changed between two snapshots of a request's execution record. The
 * comparison is the library's (`runtime/internal/progressDiff.ts`, which
 * also builds `Progress`'s typed events from it); this is its wire shape.
 *
 * @since 0.1.0
 */
export {
  /**
   * @since 0.1.0
   * @category utils
   */
  diff
} from "../../runtime/internal/progressDiff.js"

export type {
  /**
   * @since 0.1.0
   * @category models
   */
  HookRun,
  /**
   * @since 0.1.0
   * @category models
   */
  PhaseStarted,
  /**
   * @since 0.1.0
   * @category models
   */
  Progress,
  /**
   * @since 0.1.0
   * @category models
   */
  ToolEnded,
  /**
   * @since 0.1.0
   * @category models
   */
  ToolStarted
} from "../../runtime/internal/progressDiff.js"
