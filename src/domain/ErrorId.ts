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
 * @category utils
 */
export const id = (name: string): string => `effect-agent-pipeline/${name}`

/**
 * Marks every error this library defines.
 *
 * @since 0.1.0
 * @category type ids
 */
export const TypeId = "~effect-agent-pipeline/PipelineError"

/**
 * The type of {@link TypeId}.
 *
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId
