/**
 * The closed word lists the salient-token guard reads (English): sentence
 * openers, time words, currencies, the marked pole of opposites and kinship
 * words. Kept apart so `salientTokens.ts` stays the algorithm.
 */

/** Possessive and simple plural gone: "Apple's" → "apple", "euros" → "euro". */
export const normalizeWord = (word: string): string => {
  const bare = word.toLowerCase().replace(/'s$|'$/, "").replace(/[^\p{L}\p{N}:.]/gu, "")
  return bare.length >= 4 && bare.endsWith("s") && !/(ss|us|is)$/.test(bare) ? bare.slice(0, -1) : bare
}

const set = (...lines: ReadonlyArray<string>): Set<string> => new Set(lines.join(" ").split(/\s+/))

/** Never a name, even capitalized mid-sentence. */
export const closedLexicon: ReadonlySet<string> = set("i im id ill ive ok okay please thank thanks hi hello hey")

// Words a request commonly starts with: a capitalized first word in this
// list (or a verb form) is a sentence opener, not a name.
const openers = set(
  "a an the this that these those some any all every each no my your our their his her its me we you it they",
  "what whats which who whom whose when where why how is are was were am be been do does did can could will",
  "would should shall may might must have has had there here if so and or but then also just only still",
  "please kindly hey hi hello ok okay thank thanks yes yeah sorry",
  "at in on for from to into of by with about as after before since during over under between near around",
  "add adjust apply ask book bring buy calculate call cancel change check choose close compare compute",
  "confirm connect convert copy count create define delete describe download draft edit email enable",
  "disable estimate explain export fetch fill find fix forward get give go help import install keep",
  "let list log look make move name notify open order pay pick plan play post print put read rebook",
  "recommend redo reduce refresh remind remove rename renew reorder repeat replace reply report request",
  "reschedule reserve reset restart restore resume return revert rewrite run save schedule search",
  "see select sell send set setup share show sign skip sort split start stop submit suggest summarize",
  "switch take tell text track transfer translate try turn undo unsubscribe update upgrade upload use",
  "verify view wake walk want watch write need like love rent hire back",
  "briefly quickly simply really actually basically honestly finally exactly recently",
  "current currently latest last next new quick brief best cheap cheapest good great top total",
  "steps step way ways instructions info information details status price cost rate rates alarm timer",
  "reminder meeting weather forecast news today tomorrow yesterday tonight now"
)
openers.delete("new") // "New York": a name, even first.

export const isOpener = (word: string): boolean => openers.has(word)

const weekdays = set("monday tuesday wednesday thursday friday saturday sunday")
const months = set("january february march april june july august september october november december")
const relativeUnits = set("week weekend month year")
const nextWords = set("next coming following")
const lastWords = set("last past previous")

/**
 * The time tokens of a word (`next`: the word after it): absolute days,
 * weekdays, months, and relative phrases ("last night" is yesterday, "this
 * evening" tonight, "next Friday" and "Friday next week" agree).
 */
export const timeWordOf = (lower: string, next: string | undefined): ReadonlyArray<string> | undefined => {
  const bare = normalizeWord(lower)
  if (bare === "today" || bare === "tonight" || bare === "tomorrow" || bare === "yesterday") return [bare]
  if (weekdays.has(bare) || months.has(bare)) return [bare]
  if (bare === "weekend") return ["weekend"]
  const unit = next === undefined ? undefined : normalizeWord(next)
  if (unit === undefined) return undefined
  if (nextWords.has(bare) || lastWords.has(bare)) {
    const direction = nextWords.has(bare) ? "next" : "last"
    if (direction === "last" && unit === "night") return ["yesterday"]
    if (weekdays.has(unit) || unit === "week" || unit === "weekend") return [`${direction}-week`]
    if (relativeUnits.has(unit)) return [`${direction}-${unit}`]
  }
  if (bare === "this" && (unit === "evening" || unit === "night")) return ["tonight"]
  if (bare === "this" && (unit === "morning" || unit === "afternoon")) return ["today"]
  return undefined
}

const currencies: Record<string, ReadonlyArray<string>> = {
  dollar: ["dollar"],
  usd: ["dollar"],
  buck: ["dollar"],
  euro: ["euro"],
  eur: ["euro"],
  pound: ["pound"],
  gbp: ["pound"],
  sterling: ["pound"],
  yen: ["yen"],
  jpy: ["yen"],
  yuan: ["yuan"],
  cny: ["yuan"],
  rmb: ["yuan"],
  renminbi: ["yuan"],
  rupee: ["rupee"],
  inr: ["rupee"],
  franc: ["franc"],
  chf: ["franc"],
  peso: ["peso"],
  cad: ["canadian", "dollar"],
  aud: ["australian", "dollar"],
  btc: ["bitcoin"],
  eth: ["ethereum"]
}

/** The currency tokens of a normalized word ("USD", "dollars" and "$" agree). */
export const currencyOf = (bare: string): ReadonlyArray<string> | undefined =>
  Object.hasOwn(currencies, bare) ? currencies[bare] : undefined

export const currencySymbols: Record<string, string> = { "$": "dollar", "€": "euro", "£": "pound", "¥": "yen" }

// Only the marked pole of an opposite is a token: "turn on" and "enable"
// agree with a request that says neither, "off" never does.
const polarity: Record<string, string> = {
  off: "off",
  disable: "off",
  disabled: "off",
  deactivate: "off",
  closed: "closed",
  low: "low",
  lowest: "low",
  minimum: "low",
  sell: "sell",
  selling: "sell",
  sold: "sell",
  below: "below",
  less: "less",
  fewer: "less",
  lower: "less",
  decrease: "less",
  not: "not",
  no: "not",
  never: "not",
  without: "not",
  unread: "not",
  unseen: "not",
  unanswered: "not"
}

/** The polarity token of a word ("don't", "without": `not`; "off", "disable": `off`). */
export const polarityOf = (lower: string): string | undefined =>
  // "I can't log in" reports a problem; it does not negate the request.
  lower === "can't" || lower === "cannot"
    ? undefined
    : lower.endsWith("n't")
    ? "not"
    : Object.hasOwn(polarity, lower)
    ? polarity[lower]
    : undefined

const kinship: Record<string, string> = {
  mom: "mother",
  mum: "mother",
  mommy: "mother",
  mother: "mother",
  dad: "father",
  daddy: "father",
  father: "father",
  wife: "wife",
  husband: "husband",
  son: "son",
  daughter: "daughter",
  brother: "brother",
  sister: "sister",
  grandma: "grandmother",
  grandmother: "grandmother",
  grandpa: "grandfather",
  grandfather: "grandfather"
}

/** Kinship words name a person without a capital ("call mom" / "call Dad"). */
export const kinshipOf = (bare: string): string | undefined => Object.hasOwn(kinship, bare) ? kinship[bare] : undefined
