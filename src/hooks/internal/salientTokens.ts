/**
 * The salient tokens of a request: what tells it apart from a near miss
 * that shares most of its words (issue 22). Embeddings score "Paris
 * tomorrow" and "Lyon tomorrow" higher than two paraphrases, so the
 * semantic cache serves an entry only when these tokens agree.
 *
 * Extracted, normalized (case, possessives, simple plurals, punctuation):
 * - numbers, digits or words ("three", "twenty-one", "1,000"; 1 is dropped:
 *   "one share" and "a share" ask the same); hours with pm / "in the
 *   evening" on a 24-hour clock ("7 pm" is 19, "15:00" is 15);
 * - currencies (words, symbols and ISO codes: "$", "USD", "dollars" are one);
 * - all-caps codes (tickers, "VPN") and names: capitalized words; a
 *   sentence's first word, whatever its case, unless it is a common opener
 *   ("What", "Tell") or a verb form ("Sorting") — so sentence-initial
 *   capitals never make a difference;
 * - time words (today, tomorrow, weekdays, months, "last night", "next week");
 * - negations ("not", "don't", "without"), the marked pole of opposites
 *   ("off", "closed", "low", "sell", "below", "less"), kinship words;
 * - direction: an entity after "to"/"into" is `@to`, the entities before it
 *   `@from`; "from A … to B" is a route. A side without them is compatible.
 *
 * English only: another locale is another cache key (the `locale` dimension).
 */
import {
  closedLexicon,
  currencyOf,
  currencySymbols,
  isOpener,
  kinshipOf,
  normalizeWord,
  polarityOf,
  timeWordOf
} from "./semanticCacheLexicon.js"

/** A request's salient tokens, sorted: `value`, `value@to`, `value@from`, `route:a>b`. */
export type SalientTokens = ReadonlyArray<string>

interface Word {
  readonly raw: string
  readonly lower: string
  readonly initial: boolean
}

type Kind = "number" | "entity" | "other"

interface Token {
  readonly value: string
  readonly kind: Kind
  role: "to" | "from" | undefined
}

// Internal punctuation only when followed by a letter or digit: "1,000",
// "7:00", "Apple's", "Wi-Fi" stay whole; "Tokyo," and "Git:" lose it.
const wordPattern = /[\p{L}\p{N}$€£¥]+(?:['’,.:\-][\p{L}\p{N}]+)*%?/gu
const boundary = /[.?!;:\n]/

const words = (text: string): ReadonlyArray<Word> => {
  const out: Array<Word> = []
  const normalized = text.normalize("NFKC")
  let last = 0
  for (const match of normalized.matchAll(wordPattern)) {
    const start = match.index
    const initial = out.length === 0 || boundary.test(normalized.slice(last, start))
    last = start + match[0].length
    const raw = match[0].replace(/’/g, "'")
    out.push({ raw, lower: raw.toLowerCase(), initial })
  }
  return out
}

const units: Record<string, number> = Object.fromEntries(
  [
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen",
    "seventeen eighteen nineteen"
  ].join(" ").split(" ").map((w, i) => [w, i])
)
const tens: Record<string, number> = Object.fromEntries(
  "twenty thirty forty fifty sixty seventy eighty ninety".split(" ").map((w, i) => [w, (i + 2) * 10])
)
const scales: Record<string, number> = { hundred: 100, thousand: 1_000, million: 1_000_000, billion: 1_000_000_000 }
const isNumberWord = (w: string) => w in units || w in tens || w in scales

/** A run of number words ("one hundred", "twenty one") as a value. */
const numberWords = (run: ReadonlyArray<string>): number => {
  let total = 0
  let current = 0
  for (const w of run) {
    if (w in scales) {
      current = Math.max(current, 1) * scales[w]!
      if (scales[w]! >= 1000) {
        total += current
        current = 0
      }
    } else current += units[w] ?? tens[w] ?? 0
  }
  return total + current
}

const digits = /^([$€£¥])?(\d[\d,]*(?:\.\d+)?)(?::(\d\d))?(st|nd|rd|th|am|pm|%)?$/

/** Hyphenated words split when a part is a number ("52-week", "twenty-one"); else joined ("Wi-Fi"). */
const split = (list: ReadonlyArray<Word>): ReadonlyArray<Word> =>
  list.flatMap((w) => {
    const parts = w.lower.split("-")
    if (parts.length === 1) return [w]
    if (parts.some((p) => digits.test(p) || isNumberWord(p))) {
      return parts.map((p, i) => ({ raw: w.raw.split("-")[i] ?? p, lower: p, initial: w.initial && i === 0 }))
    }
    return [{ raw: w.raw.replace(/-/g, ""), lower: parts.join(""), initial: w.initial }]
  })

const eveningAfter = (list: ReadonlyArray<Word>, i: number): boolean => {
  const next = list.slice(i + 1, i + 4).map((w) => w.lower)
  return next[0] === "pm" || next[0] === "p.m" ||
    (next[0] === "in" && next[1] === "the" && (next[2] === "afternoon" || next[2] === "evening"))
}

const hour = (value: number, pm: boolean, minutes: string | undefined): string => {
  const h = pm && value >= 1 && value <= 11 ? value + 12 : value
  return minutes === undefined || minutes === "00" ? String(h) : `${h}:${minutes}`
}

const skipBeforeEntity = new Set(["the", "a", "an", "my", "your", "our", "their", "his", "her", "its", "some"])

/** The tokens of the word at `i` that is not a number: time, currency, polarity, kinship, name. */
const wordTokens = (list: ReadonlyArray<Word>, i: number): ReadonlyArray<readonly [string, Kind]> => {
  const w = list[i]!
  const bare = normalizeWord(w.lower)
  const time = timeWordOf(w.lower, list[i + 1]?.lower)
  if (time !== undefined) return time.map((t) => [t, "other"])
  const currency = currencyOf(bare)
  if (currency !== undefined) return currency.map((c) => [c, "entity"])
  const polarity = polarityOf(w.lower)
  if (polarity !== undefined) {
    // "Don't let me forget to …" asks for it: a double negative.
    const doubled = polarity === "not" && list.slice(i + 1, i + 4).some((x) => x.lower === "forget")
    return doubled ? [] : [[polarity, "other"]]
  }
  const kin = kinshipOf(bare)
  if (kin !== undefined) return [[kin, "other"]]
  return isEntity(w, bare) ? [[bare, "entity"]] : []
}

/** A request's salient tokens (see the module header). */
export const salientTokens = (text: string): SalientTokens => {
  const list = split(words(text))
  const tokens: Array<Token> = []
  const routes: Array<string> = []
  const add = (value: string, kind: Kind) => tokens.push({ value, kind, role: undefined })
  let pendingRole: "to" | "from" | undefined
  for (let i = 0; i < list.length; i++) {
    const w = list[i]!
    const before = tokens.length
    if (isNumberWord(w.lower) && w.lower !== "zero") {
      let j = i
      while (j + 1 < list.length && isNumberWord(list[j + 1]!.lower)) j++
      const value = numberWords(list.slice(i, j + 1).map((x) => x.lower))
      if (value !== 1) add(hour(value, eveningAfter(list, j), undefined), "number")
      i = j
    } else if (digits.test(w.lower)) {
      const [, symbol, n, minutes, suffix] = digits.exec(w.lower)!
      const value = Number(n!.replace(/,/g, ""))
      if (symbol !== undefined) add(currencySymbols[symbol]!, "entity")
      if (value !== 1) add(hour(value, suffix === "pm" || eveningAfter(list, i), minutes), "number")
    } else if (w.lower === "from" || w.lower === "to" || w.lower === "into") {
      pendingRole = w.lower === "from" ? "from" : "to"
      if (w.lower === "from") routeFrom(list, i, routes)
      continue
    } else if (w.lower === "us" && /^dollars?$/.test(list[i + 1]?.lower ?? "")) {
      continue // "US dollars" are dollars
    } else {
      for (const [value, kind] of wordTokens(list, i)) add(value, kind)
    }
    // The entities right after "to" / "from" (determiners skipped) take its direction.
    const added = tokens.slice(before)
    if (pendingRole !== undefined && added.length > 0 && added.every((t) => t.kind === "entity")) {
      for (const t of added) t.role = pendingRole
    } else if (!skipBeforeEntity.has(w.lower)) pendingRole = undefined
  }
  // "dollars to euros": the entities before the last one marked `to` are its source.
  let lastTo = -1
  tokens.forEach((t, i) => {
    if (t.kind === "entity" && t.role === "to") lastTo = i
  })
  tokens.forEach((t, i) => {
    if (i < lastTo && t.kind === "entity" && t.role === undefined) t.role = "from"
  })
  const out = new Set<string>(routes.map((r) => `route:${r}`))
  for (const t of tokens) out.add(t.role === undefined ? t.value : `${t.value}@${t.role}`)
  return [...out].sort()
}

const isEntity = (w: Word, bare: string): boolean => {
  if (bare.length < 2 || closedLexicon.has(bare) || /^i('|$)/.test(w.lower)) return false
  const letters = w.raw.replace(/[^\p{L}]/gu, "")
  // All caps of 2+ letters: a code (ticker, "VPN", "UV").
  if (letters.length >= 2 && letters === letters.toUpperCase() && /\p{Lu}/u.test(letters)) return true
  if (/\p{Lu}/u.test(w.raw.slice(1))) return true
  // A sentence's first word is capitalized anyway, or not: whatever its case,
  // a name only if it is not a common opener or a verb form ("Sorting").
  if (w.initial) return /^\p{L}/u.test(w.raw) && !isOpener(bare) && !/(ing|ed)$/.test(bare)
  return /^\p{Lu}/u.test(w.raw)
}

/** "from A … to B": the first words after each (determiners skipped). */
const routeFrom = (list: ReadonlyArray<Word>, i: number, routes: Array<string>) => {
  const after = (k: number) => {
    let j = k + 1
    while (j < list.length && skipBeforeEntity.has(list[j]!.lower)) j++
    return list[j] === undefined ? undefined : normalizeWord(list[j]!.lower)
  }
  const source = after(i)
  for (let k = i + 1; k < list.length && k < i + 8; k++) {
    if (list[k]!.initial) return
    if (list[k]!.lower === "to" || list[k]!.lower === "into") {
      const target = after(k)
      if (source !== undefined && target !== undefined) routes.push(`${source}>${target}`)
      return
    }
  }
}

const base = (token: string) => token.replace(/@(to|from)$/, "")

/**
 * Whether two requests' tokens agree: the same values; the same direction
 * where both have one; the same routes when both have any.
 */
export const sameSalient = (a: SalientTokens, b: SalientTokens): boolean => {
  const parse = (tokens: SalientTokens) => {
    const values = new Map<string, string | undefined>()
    const routes = new Set<string>()
    for (const t of tokens) {
      if (t.startsWith("route:")) routes.add(t)
      else values.set(base(t), t === base(t) ? values.get(base(t)) : t.slice(base(t).length + 1))
    }
    return { values, routes }
  }
  const x = parse(a)
  const y = parse(b)
  if (x.values.size !== y.values.size) return false
  for (const [value, role] of x.values) {
    if (!y.values.has(value)) return false
    const other = y.values.get(value)
    if (role !== undefined && other !== undefined && role !== other) return false
  }
  if (x.routes.size > 0 && y.routes.size > 0) {
    if (x.routes.size !== y.routes.size || [...x.routes].some((r) => !y.routes.has(r))) return false
  }
  return true
}
