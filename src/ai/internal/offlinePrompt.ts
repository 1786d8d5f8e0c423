/**
 * Reading the offline model's prompt: the text of the last user message, and
 * the JSON-lines sections the default `PromptBuilder` writes into it (the
 * tool descriptors of `<tools>`, the step results of `<step_results>`).
 * Anything the default builder did not write is skipped, not an error.
 */
import type { Prompt } from "@effect/ai"
import type { StepResult } from "../../domain/ExecutionRecord.js"
import { isJson, type JsonObject } from "../../domain/Json.js"
import type { ToolDescriptor } from "../../domain/ToolDescriptor.js"

const isRecord = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * A JSON object (not an array, not `null`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isJsonObject = (u: unknown): u is JsonObject => isRecord(u) && isJson(u)

/**
 * Text of the last user message, or `undefined` when there is none.
 *
 * @since 0.1.0
 * @category utils
 */
export const lastUserText = (prompt: Prompt.Prompt): string | undefined => {
  for (let i = prompt.content.length - 1; i >= 0; i--) {
    const message = prompt.content[i]
    if (message !== undefined && message.role === "user") {
      let text = ""
      for (const part of message.content) if (part.type === "text") text += part.text
      return text
    }
  }
  return undefined
}

/** Parses one JSON value per non-empty line; lines that do not parse are skipped. */
const jsonLines = (section: string): ReadonlyArray<unknown> => {
  const out: Array<unknown> = []
  for (const line of section.split("\n")) {
    if (line.trim().length === 0) continue
    try {
      out.push(JSON.parse(line))
    } catch {
      // not JSON: not something the default builder wrote; ignore
    }
  }
  return out
}

/**
 * The tool descriptors of a `<tools>` section; malformed lines are skipped.
 *
 * @since 0.1.0
 * @category utils
 */
export const parseTools = (section: string): ReadonlyArray<ToolDescriptor> =>
  jsonLines(section).flatMap((u): ReadonlyArray<ToolDescriptor> =>
    isRecord(u) && typeof u.namespace === "string" && typeof u.agent === "string" &&
      typeof u.capability === "string"
      ? [{
        namespace: u.namespace,
        agent: u.agent,
        capability: u.capability,
        description: typeof u.description === "string" ? u.description : "",
        parameters: isJsonObject(u.parameters) ? u.parameters : {}
      }]
      : []
  )

/**
 * What the synthesis answer needs of one step result.
 *
 * @since 0.1.0
 * @category models
 */
export type StepSummary = Pick<StepResult, "capability" | "status" | "output" | "error">

/**
 * The step results of a `<step_results>` section; malformed lines are skipped.
 *
 * @since 0.1.0
 * @category utils
 */
export const parseSteps = (section: string): ReadonlyArray<StepSummary> =>
  jsonLines(section).flatMap((u): ReadonlyArray<StepSummary> => {
    if (!isRecord(u) || typeof u.capability !== "string" || typeof u.status !== "string") return []
    const status = u.status
    if (status !== "succeeded" && status !== "failed" && status !== "skipped" && status !== "denied") return []
    return [{
      capability: u.capability,
      status,
      ...(u.output !== undefined && isJson(u.output) ? { output: u.output } : {}),
      ...(typeof u.error === "string" ? { error: u.error } : {})
    }]
  })
