/**
 * The offline model's synthesis (see the header of `OfflineModel.ts`): the
 * plain listing of the step results, one line per step, under a line that
 * quotes the request and tallies the outcomes; then the memory lines that
 * share words with the request (`offlineMemory.ts`), under a line that says
 * they come from earlier requests. With no step results, the memory lines
 * alone answer; with neither, the answer says no tool was found.
 */
import type { Json } from "../../domain/Json.js"
import { readSection } from "../../domain/PromptSections.js"
import { relevantMemory } from "./offlineMemory.js"
import { parseSteps, type StepSummary } from "./offlinePrompt.js"

/** Rendered step outputs are cut at this many characters. */
const maxOutputChars = 300
/** The request is quoted in the answer up to this many characters. */
const maxRequestChars = 200
/** Quoted memory lines are cut at this many characters. */
const maxMemoryChars = 500

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

// Says where the lines come from and that they may be stale, as the view's notice does.
const memoryHeading = "From earlier requests (recorded before this one, possibly outdated):"

/**
 * The answer to a synthesis prompt; `OfflineModel.synthesisFromPrompt` documents it.
 *
 * @since 0.1.0
 * @category utils
 */
export const synthesisFromPrompt = (prompt: string): string => {
  const request = truncate(oneLine(readSection(prompt, "user_request") ?? prompt), maxRequestChars)
  const steps = parseSteps(readSection(prompt, "step_results") ?? "")
  // Matched against the whole request, not the quoted (possibly cut) one.
  const relevant = relevantMemory(readSection(prompt, "agent_memory"), readSection(prompt, "user_request") ?? "")
  const memory = [
    ...(relevant.legend === undefined ? [] : [relevant.legend]),
    ...relevant.lines.map((line) => truncate(line, maxMemoryChars))
  ]
  if (steps.length === 0) {
    return relevant.lines.length === 0
      ? `I could not find a tool for: "${request}".`
      : [`No tool ran for "${request}". ${memoryHeading}`, ...memory].join("\n")
  }
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
    ...steps.map(renderStep),
    ...(relevant.lines.length === 0 ? [] : [memoryHeading, ...memory])
  ].join("\n")
}
