/**
 * The default entity extractor of the memory hooks: the names a request or
 * a step is about — quoted phrases, capitalized words (less a list of
 * common sentence openers), all-caps tokens (tickers, codes) and
 * identifier-like tokens with digits. Deterministic and cheap; a user can replace it
 * (`entityExtractor`) with a model-backed one.
 */

/** At most this many entities per text. */
export const maxEntities = 16
/** An entity is at most this many characters. */
export const maxEntityLength = 64

const stopwords = new Set([
  "a",
  "also",
  "an",
  "and",
  "are",
  "can",
  "could",
  "did",
  "do",
  "does",
  "for",
  "hello",
  "hi",
  "how",
  "i",
  "in",
  "is",
  "it",
  "me",
  "my",
  "please",
  "show",
  "tell",
  "thanks",
  "the",
  "to",
  "what",
  "whats",
  "when",
  "where",
  "which",
  "who",
  "why",
  "will",
  "would",
  "you",
  "book",
  "buy",
  "check",
  "compare",
  "describe",
  "explain",
  "help",
  "recall",
  "remind",
  "sell",
  "send",
  "summarize",
  "convert",
  "find",
  "get",
  "give",
  "let",
  "lets",
  "list",
  "no",
  "now",
  "ok",
  "okay",
  "quote",
  "then",
  "there",
  "this",
  "that",
  "today",
  "tomorrow",
  "was",
  "we",
  "yes",
  "yesterday"
])

const quoted = /["“']([^"”']{2,64})["”']/gu
const word = /[\p{L}\p{N}][\p{L}\p{N}._-]*/gu

/** The entities of `text`, in order of first appearance, without duplicates (case-insensitive). */
export const extractEntities = (text: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  const seen = new Set<string>()
  const add = (candidate: string): void => {
    const entity = candidate.trim().replace(/[.,;:!?]+$/u, "")
    const key = entity.toLowerCase()
    if (entity.length < 2 || entity.length > maxEntityLength || seen.has(key) || stopwords.has(key)) return
    if (found.length >= maxEntities) return
    seen.add(key)
    found.push(entity)
  }
  // Words inside a quoted phrase belong to the phrase, not on their own.
  const spans: Array<readonly [number, number]> = []
  for (const match of text.matchAll(quoted)) {
    add(match[1]!)
    spans.push([match.index, match.index + match[0].length])
  }
  for (const match of text.matchAll(word)) {
    if (spans.some(([from, to]) => match.index >= from && match.index < to)) continue
    const token = match[0]
    const capitalized = /^\p{Lu}/u.test(token)
    const identifier = /\p{L}/u.test(token) && /\p{N}/u.test(token)
    if (capitalized || identifier) add(token)
  }
  return found
}

/** The entities of `candidates` that appear in `grounds` (case-insensitive): the rest are rejected. */
export const ground = (
  candidates: ReadonlyArray<string>,
  grounds: string
): { readonly accepted: ReadonlyArray<string>; readonly rejected: ReadonlyArray<string> } => {
  const haystack = grounds.toLowerCase()
  const accepted: Array<string> = []
  const rejected: Array<string> = []
  for (const candidate of candidates) {
    const entity = candidate.trim()
    if (entity.length > 0 && entity.length <= maxEntityLength && haystack.includes(entity.toLowerCase())) {
      if (!accepted.includes(entity)) accepted.push(entity)
    } else rejected.push(candidate)
  }
  return { accepted, rejected }
}
