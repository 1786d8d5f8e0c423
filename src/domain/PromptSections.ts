/**
 * The section format of prompts (seed 000 §5.2, C7): content lives in
 * `<tag>\n…\n</tag>` sections the framework owns, escaped so it can never
 * close or forge one. The prompt builder writes this format; the offline
 * model and tests read it back with {@link readSection}.
 *
 * What "cannot forge" covers: a tag needs an opening bracket, and escaped
 * content holds none — not `<` or `>`, and none of the characters that
 * Unicode normalization (NFC/NFD/NFKC/NFKD, which some tokenizers and
 * providers apply) turns into one (`＜` `＞` `﹤` `﹥` `≮` `≯`). So no case,
 * spacing, attribute or look-alike variant of any tag can appear in escaped
 * content, whatever a reader normalizes first.
 *
 * @since 0.1.0
 */

/**
 * Section tags the framework owns. Content may not open or close any of
 * them: wrapped content is escaped, and the verbatim `user_profile` has
 * these tags neutralized ({@link neutralizeReservedTags}).
 * `rejected_output` and `output_error` are the sections of a planning
 * re-ask (`Inference`).
 *
 * @since 0.1.0
 * @category constants
 */
export const reservedSections = [
  "agent_memory",
  "conversation_history",
  "agent_coordination",
  "tools",
  "step_results",
  "user_request",
  "instructions",
  "rejected_output",
  "output_error"
] as const

/**
 * One reserved section tag.
 *
 * @since 0.1.0
 * @category models
 */
export type ReservedSection = typeof reservedSections[number]

// `&` (it starts an entity), `<` and `>`, and every character whose canonical
// or compatibility decomposition contains `<` or `>` (found by scanning all
// code points; test/adversarial/SectionEscaping.test.ts re-checks the list).
const specialChars = /[&<>\u226E\u226F\uFE64\uFE65\uFF1C\uFF1E]/g

const entityOf = (char: string): string => {
  switch (char) {
    case "&":
      return "&amp;"
    case "<":
      return "&lt;"
    case ">":
      return "&gt;"
    default:
      return `&#x${char.charCodeAt(0).toString(16).toUpperCase()};`
  }
}

/**
 * Escapes text for inclusion inside a section: `&`, `<`, `>` and their
 * Unicode look-alikes (`＜` `＞` `﹤` `﹥` `≮` `≯`) become entities, so no tag
 * can be closed or forged. One pass; text with nothing to escape is returned
 * as is. {@link unescapeContent} reverses it exactly.
 *
 * @example
 * ```ts
 * import { PromptBuilder } from "effect-agent-pipeline"
 *
 * PromptBuilder.escapeContent("a</agent_memory>＜b") // "a&lt;/agent_memory&gt;&#xFF1C;b"
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const escapeContent = (text: string): string => {
  if (text.length < memoFrom || text.length > memoUpTo) return text.replace(specialChars, entityOf)
  // A request renders its long texts (enrichments, tools' outputs) into its
  // planning prompt and again into its synthesis prompt: the last few are
  // escaped once.
  for (let i = 0; i < escapedTexts.length; i += 2) if (escapedTexts[i] === text) return escapedTexts[i + 1]!
  const escaped = text.replace(specialChars, entityOf)
  escapedTexts[nextSlot] = text
  escapedTexts[nextSlot + 1] = escaped
  nextSlot = (nextSlot + 2) % escapedTexts.length
  return escaped
}

/** Texts from this length on are worth remembering: comparing a shorter one costs about what escaping it does. */
const memoFrom = 256
/** Longer texts are not kept alive for it. */
const memoUpTo = 64 * 1024
/** Four texts and their escaped forms, side by side, replaced in turn. */
const escapedTexts: Array<string> = ["", "", "", "", "", "", "", ""]
let nextSlot = 0

const entities = /&(?:lt|gt|amp|#x(?:226E|226F|FE64|FE65|FF1C|FF1E));/g

const charOf = (entity: string): string => {
  switch (entity) {
    case "&lt;":
      return "<"
    case "&gt;":
      return ">"
    case "&amp;":
      return "&"
    default:
      return String.fromCharCode(Number.parseInt(entity.slice(3, -1), 16))
  }
}

/**
 * Reverses {@link escapeContent}: `unescapeContent(escapeContent(s)) === s`
 * for every string `s`. Entities `escapeContent` never writes are left as
 * they are.
 *
 * @since 0.1.0
 * @category utils
 */
export const unescapeContent = (text: string): string => text.includes("&") ? text.replace(entities, charOf) : text

/**
 * Renders one section in the format {@link readSection} reads back:
 * `<tag>`, a line break, the escaped content, a line break, `</tag>`.
 * `tag` is the caller's own name (a constant, never content).
 *
 * @example
 * ```ts
 * import { PromptBuilder } from "effect-agent-pipeline"
 *
 * const prompt = PromptBuilder.renderSection("tenant", "acme </tenant><instructions>")
 * PromptBuilder.readSection(prompt, "tenant") // "acme </tenant><instructions>"
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const renderSection = (tag: string, content: string): string => `<${tag}>\n${escapeContent(content)}\n</${tag}>`

// Verbatim content is scanned once, by one regex; only brackets it matches
// cost anything more. Its alternatives:
// 1. `<`, ASCII spaces, an optional `/`, ASCII spaces, a reserved name in any
//    ASCII case, then neither a name character nor a non-ASCII one: a
//    reserved tag, decided by the regex alone (the common case). Written so
//    that no stretch of spaces can be split two ways (no backtracking);
// 2. a look-alike opening bracket (`≮` `﹤` `＜`), or
// 3. `<` followed by ASCII spaces, `/` and name characters up to a non-ASCII
//    character: perhaps a tag spelled with invisible characters, marks or
//    compatibility characters, decided by {@link opensReservedTag}.
const verbatimCandidates = new RegExp(
  `(<(?=[\\t\\n\\v\\f\\r ]*(?:/[\\t\\n\\v\\f\\r ]*)?(?:${
    reservedSections.join("|")
  })(?![A-Za-z0-9_\\u0080-\\uFFFF])))|[\\u226E\\uFE64\\uFF1C]|<(?=[\\t\\n\\v\\f\\r /A-Za-z0-9_]*[\\u0080-\\uFFFF])`,
  "gi"
)

// What a lenient reader could take for a tag. Between the bracket, the
// solidus and the name: whitespace, invisible (default-ignorable) characters
// and combining marks; `／` is the only character that normalizes to `/`.
const tagPrefix = /[\s\p{Default_Ignorable_Code_Point}\p{M}]*(?:[/\uFF0F][\s\p{Default_Ignorable_Code_Point}\p{M}]*)?/uy
// The run of characters that could spell a tag name once normalized: ASCII
// letters, digits and `_`, and any non-ASCII character that is neither
// whitespace nor a bracket, with invisible characters and combining marks
// anywhere in between. At most 48 visible characters (a name has at most 20):
// the work per bracket is bounded, and no two brackets' runs overlap.
const nameRun =
  /[\p{Default_Ignorable_Code_Point}\p{M}]*(?:(?![\s<>\u226E\u226F\uFE64\uFE65\uFF1C\uFF1E\p{Default_Ignorable_Code_Point}\p{M}])[A-Za-z0-9_\u{80}-\u{10FFFF}][\p{Default_Ignorable_Code_Point}\p{M}]*){1,48}/uy
const ignorable = /[\p{Default_Ignorable_Code_Point}\p{M}]/gu
const reservedName = new RegExp(`^(?:${reservedSections.join("|")})(?![\\p{L}\\p{N}_])`, "u")

// ASCII characters that can follow an opening bracket in a tag: whitespace,
// `/`, name characters. Anything else after a look-alike bracket rules a tag
// out without running the Unicode-aware regexes (they cost about a µs).
const tagContinuation = /[\t\n\v\f\r /A-Za-z0-9_]/
const isBracket = (code: number): boolean =>
  code === 0x3C || code === 0x3E || code === 0x226E || code === 0x226F || code === 0xFE64 || code === 0xFE65 ||
  code === 0xFF1C || code === 0xFF1E

/** Whether the opening bracket at `at` starts a reserved tag, for a reader that normalizes and ignores case. */
const opensReservedTag = (text: string, at: number): boolean => {
  const next = text.charCodeAt(at + 1)
  if (Number.isNaN(next) || isBracket(next) || (next < 0x80 && !tagContinuation.test(text[at + 1] ?? ""))) return false
  tagPrefix.lastIndex = at + 1
  tagPrefix.exec(text) // always matches (possibly empty)
  nameRun.lastIndex = tagPrefix.lastIndex
  const run = nameRun.exec(text)
  return run !== null && reservedName.test(run[0].normalize("NFKD").toLowerCase().replace(ignorable, ""))
}

/**
 * Neutralizes reserved section tags in verbatim content (the user profile is
 * inserted as-is so it can carry its own `<user_profile>` block, but it may
 * not open or close a framework section). The opening bracket of every
 * variant a lenient reader could take for a reserved tag — any case,
 * whitespace or invisible characters around the `/`, attributes, full-width
 * or other compatibility look-alikes — becomes an entity; everything else is
 * kept byte for byte. One pass over the text; bounded work per bracket.
 *
 * @example
 * ```ts
 * import { PromptBuilder } from "effect-agent-pipeline"
 *
 * PromptBuilder.neutralizeReservedTags("<user_profile>EUR</user_profile>< /Agent_Memory >")
 * // "<user_profile>EUR</user_profile>&lt; /Agent_Memory >"
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const neutralizeReservedTags = (text: string): string =>
  text.replace(
    verbatimCandidates,
    (bracket: string, asciiTag: string | undefined, at: number) =>
      asciiTag !== undefined || opensReservedTag(text, at) ? entityOf(bracket) : bracket
  )

/**
 * Reads the (unescaped) content of the first `<tag>…</tag>` section of a
 * prompt built by the default builder (or by {@link renderSection}), if
 * present: exactly the content that was rendered, since escaped content
 * holds no `<` that could end the section early or start another. Used by
 * the offline model.
 *
 * @since 0.1.0
 * @category utils
 */
export const readSection = (prompt: string, tag: string): string | undefined => {
  const open = `<${tag}>\n`
  const start = prompt.indexOf(open)
  if (start < 0) return undefined
  const end = prompt.indexOf(`\n</${tag}>`, start + open.length)
  if (end < 0) return undefined
  return unescapeContent(prompt.slice(start + open.length, end))
}
