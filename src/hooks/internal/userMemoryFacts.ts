/**
 * What the user fact extractor asks the model, and how its answer is
 * checked: the reply is data from a model, not trusted input — each entry
 * is kept only when it is a short fact of a known kind with a confidence in
 * range that does not look like a secret, and at most `maxFacts` are kept.
 * Every entry left out says why (the effect records it).
 */
import type { JsonObject } from "../../domain/Json.js"
import * as UserFacts from "../../stores/UserFacts.js"
import { escapeXml, shorten } from "./memoryModel.js"

/** A fact the extractor keeps. */
export interface Candidate {
  readonly text: string
  readonly kind: UserFacts.Kind
  readonly confidence: number
}

/** Why an entry of the reply was left out. */
export type RejectionReason =
  | "not_an_object"
  | "missing_text"
  | "empty_text"
  | "too_long"
  | "unknown_kind"
  | "bad_confidence"
  | "low_confidence"
  | "looks_secret"
  | "duplicate"
  | "over_limit"

/** An entry left out: its zero-based index in the reply and the reason. */
export interface Rejection {
  readonly index: number
  readonly reason: RejectionReason
}

/** The bounds a reply is checked against. */
export interface Bounds {
  readonly maxFacts: number
  readonly maxFactLength: number
  readonly minConfidence: number
}

/** How much of the request and of the response the prompt quotes. */
const quoteChars = 4_000

/** The extraction prompt for one exchange. */
export const extractionPrompt = (request: string, response: string, maxFacts: number): string =>
  [
    "You extract durable facts about the user from one exchange between the user and an assistant.",
    `Answer with ONLY a JSON array of at most ${maxFacts} objects:`,
    `[{"text": "<short third-person sentence>", "kind": "identity" | "preference" | "fact", "confidence": <0..1>}]`,
    "- identity: who the user is (name, role, where they live or work)",
    "- preference: what the user likes, wants or avoids",
    "- fact: anything else about the user that will still be true in later conversations",
    "Only facts about the user, stated or clearly implied by the user. Nothing about the assistant, nothing",
    "transient (today's request itself), and never secrets: passwords, keys, tokens, card or account numbers.",
    "Answer [] when there is nothing durable.",
    "",
    "<user_request>",
    escapeXml(shorten(request, quoteChars).text),
    "</user_request>",
    "<assistant_response>",
    escapeXml(shorten(response, quoteChars).text),
    "</assistant_response>"
  ].join("\n")

const secretWords =
  /\b(?:password|passcode|passwd|pin code|api[\s_-]?key|secret|token|private key|ssn|social security|cvv|iban)\b/i
const longDigits = /\d(?:[\s-]?\d){8,}/
const tokenLike = /\b(?:sk|pk|rk|ghp|gho|xox[abprs]|AKIA)[-_]?[A-Za-z0-9_-]{8,}|[A-Za-z0-9+/_=-]{32,}/

/** Whether a fact's text looks like it carries a secret (and so is not kept). */
export const looksSecret = (text: string): boolean =>
  secretWords.test(text) || longDigits.test(text) || tokenLike.test(text)

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const checkEntry = (entry: unknown, bounds: Bounds): Candidate | RejectionReason => {
  if (!isObject(entry)) return "not_an_object"
  if (typeof entry.text !== "string") return "missing_text"
  const text = entry.text.replace(/\s+/g, " ").trim()
  if (text.length === 0) return "empty_text"
  if (text.length > bounds.maxFactLength) return "too_long"
  const kind = typeof entry.kind === "string" ? entry.kind.trim().toLowerCase() : undefined
  if (kind !== "identity" && kind !== "preference" && kind !== "fact") return "unknown_kind"
  const confidence = entry.confidence
  if (typeof confidence !== "number" || !Number.isFinite(confidence) || confidence < 0 || confidence > 1) {
    return "bad_confidence"
  }
  if (confidence < bounds.minConfidence) return "low_confidence"
  if (looksSecret(text)) return "looks_secret"
  return { text, kind, confidence }
}

/** The facts kept from the reply's entries, in order, and the entries left out. */
export const normalizeFacts = (
  entries: ReadonlyArray<unknown>,
  bounds: Bounds
): { readonly facts: ReadonlyArray<Candidate>; readonly rejected: ReadonlyArray<Rejection> } => {
  const facts: Array<Candidate> = []
  const rejected: Array<Rejection> = []
  const seen = new Set<string>()
  entries.forEach((entry, index) => {
    const checked = checkEntry(entry, bounds)
    if (typeof checked === "string") return void rejected.push({ index, reason: checked })
    const key = UserFacts.normalize(checked.text)
    if (seen.has(key)) return void rejected.push({ index, reason: "duplicate" })
    if (facts.length >= bounds.maxFacts) return void rejected.push({ index, reason: "over_limit" })
    seen.add(key)
    facts.push(checked)
  })
  return { facts, rejected }
}

/** A candidate as the effect records it. */
export const candidateJson = (fact: Candidate): JsonObject => ({
  text: fact.text,
  kind: fact.kind,
  confidence: fact.confidence
})
