/**
 * The offline model's synthesis (see the header of `OfflineModel.ts`): the
 * plain listing of the step results, one line per step, under a line that
 * quotes the request and tallies the outcomes.
 */
import type { Json } from "../../domain/Json.js"
import { readSection } from "../../domain/PromptSections.js"
import { parseSteps, type StepSummary } from "./offlinePrompt.js"

/** Rendered step outputs are cut at this many characters. */
const maxOutputChars = 300
/** The request is quoted in the answer up to this many characters. */
const maxRequestChars = 200

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()

const truncate = (text: string, max: number): string => {
  if (text.length <= max) return text
  // Do not cut a surrogate pair in half.
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max
  return `${text.slice(0, end)}…`
}

const renderScalar = (value: Json): string =>
  typeof value === "object" && value !== null ? JSON.stringify(value) : String(value)

const renderOutput = (output: Json | undefined): string => {
  if (output === undefined || output === null) return "no output"
  if (typeof output !== "object" || Array.isArray(output)) {
    return truncate(oneLine(renderScalar(output)), maxOutputChars)
  }
  const fields = Object.entries(output).map(([k, v]) => `${k}=${renderScalar(v)}`)
  return truncate(oneLine(fields.length === 0 ? "{}" : fields.join(", ")), maxOutputChars)
}

const renderStep = (step: StepSummary): string => {
  switch (step.status) {
    case "succeeded":
      return `- ${step.capability}: ${renderOutput(step.output)}`
    case "failed":
      return `- ${step.capability} failed: ${truncate(oneLine(step.error ?? "unknown error"), maxOutputChars)}`
    case "skipped":
      return step.error === undefined
        ? `- ${step.capability} was skipped.`
        : `- ${step.capability} was skipped: ${truncate(oneLine(step.error), maxOutputChars)}`
    case "denied":
      return `- ${step.capability} was denied: ${truncate(oneLine(step.error ?? "by a guard"), maxOutputChars)}`
  }
}

/**
 * The answer to a synthesis prompt; `OfflineModel.synthesisFromPrompt` documents it.
 *
 * @since 0.1.0
 * @category utils
 */
export const synthesisFromPrompt = (prompt: string): string => {
  const request = truncate(oneLine(readSection(prompt, "user_request") ?? prompt), maxRequestChars)
  const steps = parseSteps(readSection(prompt, "step_results") ?? "")
  if (steps.length === 0) return `I could not find a tool for: "${request}".`
  const count = (status: StepSummary["status"]) => steps.filter((s) => s.status === status).length
  const tally = [
    `${count("succeeded")} succeeded`,
    ...(count("failed") > 0 ? [`${count("failed")} failed`] : []),
    ...(count("skipped") > 0 ? [`${count("skipped")} skipped`] : [])
  ].join(", ")
  return [
    `Here is what the tools returned for "${request}" (${steps.length} step${
      steps.length === 1 ? "" : "s"
    }: ${tally}):`,
    ...steps.map(renderStep)
  ].join("\n")
}
