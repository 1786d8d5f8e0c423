/**
 * The words the offline model's planning matches (see offlinePlanning.ts):
 * stems of a request's meaningful words, and the words as written (for
 * names, places and tickers).
 */

/**
 * @since 0.1.0
 * @category constants
 */
export const stopWords: ReadonlySet<string> = new Set([
  "the",
  "and",
  "for",
  "are",
  "was",
  "were",
  "what",
  "whats",
  "which",
  "who",
  "whom",
  "why",
  "how",
  "when",
  "where",
  "with",
  "without",
  "this",
  "that",
  "these",
  "those",
  "from",
  "into",
  "onto",
  "about",
  "please",
  "can",
  "could",
  "would",
  "should",
  "will",
  "shall",
  "you",
  "your",
  "yours",
  "our",
  "ours",
  "their",
  "them",
  "they",
  "its",
  "his",
  "her",
  "she",
  "him",
  "have",
  "has",
  "had",
  "does",
  "did",
  "doing",
  "done",
  "get",
  "got",
  "give",
  "show",
  "tell",
  "let",
  "lets",
  "some",
  "any",
  "all",
  "much",
  "many",
  "more",
  "most",
  "want",
  "need",
  "like",
  "also",
  "just",
  "than",
  "then",
  "there",
  "here",
  "not",
  "but",
  "out",
  "over",
  "under",
  "via",
  "per",
  "now",
  "current",
  "currently",
  "latest",
  "tool",
  "tools",
  "service",
  "services",
  "agent",
  "agents",
  "use",
  "using",
  "find",
  "look",
  "check"
])

/**
 * Prepositions after which a place name is expected.
 *
 * @since 0.1.0
 * @category constants
 */
export const placePrepositions: ReadonlySet<string> = new Set(["in", "to", "for", "at"])

/**
 * Crude suffix stripping so "quotes"/"quote" and "trading"/"trade" meet.
 *
 * @since 0.1.0
 * @category utils
 */
export const stem = (word: string): string => {
  let w = word
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`
  else if (w.endsWith("ing") && w.length >= 6) w = w.slice(0, -3)
  else if (w.endsWith("es") && w.length >= 5 && !w.endsWith("ss")) w = w.slice(0, -2)
  else if (w.endsWith("s") && w.length >= 4 && !w.endsWith("ss")) w = w.slice(0, -1)
  if (w.endsWith("e") && w.length >= 4) w = w.slice(0, -1)
  return w
}

/**
 * Lowercase words of a text, split on anything that is not a letter or digit.
 *
 * @since 0.1.0
 * @category utils
 */
export const lowerWords = (text: string): ReadonlyArray<string> =>
  text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0)

/**
 * Distinct stems of the meaningful words of a text, in order of appearance.
 *
 * @since 0.1.0
 * @category utils
 */
export const tokenize = (text: string): ReadonlyArray<string> => {
  const out = new Set<string>()
  for (const word of lowerWords(text.replace(/'/g, ""))) {
    if (word.length < 3 || stopWords.has(word)) continue
    out.add(stem(word))
  }
  return [...out]
}

/**
 * Words of a request as written (case kept, punctuation dropped).
 *
 * @since 0.1.0
 * @category utils
 */
export const rawWords = (text: string): ReadonlyArray<string> =>
  text.match(/[\p{L}\p{N}][\p{L}\p{N}'.-]*[\p{L}\p{N}]|[\p{L}\p{N}]/gu) ?? []

/**
 * @since 0.1.0
 * @category guards
 */
export const isCapitalized = (word: string): boolean => /^\p{Lu}/u.test(word) && word !== "I"
/**
 * @since 0.1.0
 * @category guards
 */
export const isTicker = (word: string): boolean => /^[A-Z]{1,5}$/.test(word) && word !== "I" && word !== "A"
