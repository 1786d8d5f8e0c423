/**
 * What every error of this library carries: a fully qualified tag and the
 * `TypeId` the `isPipelineError` / `isAgentConfigError` guards check.
 *
 * @since 0.1.0
 */

/**
 * The fully qualified identifier of an error class.
 *
 * @since 0.1.0
 */
export const id = (name: string): string => `effect-agent-pipeline/${name}`

/**
 * Marks every error this library defines.
 *
 * @since 0.1.0
 */
export const TypeId = "~effect-agent-pipeline/PipelineError"

/**
 * @since 0.1.0
 */
export type TypeId = typeof TypeId
