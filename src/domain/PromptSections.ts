/**
 * The section format of prompts (seed 000 §5.2, C7): content lives in
 * `<tag>…</tag>` sections the framework owns, escaped so it can never close
 * or forge one. The prompt builder writes this format; the offline model and
 * tests read it back.
 *
 * @since 0.1.0
 */

/**
 * Section tags the framework owns. Content may not open or close any of them.
 *
 * @since 0.1.0
 */
export const ReservedSections = [
  "agent_memory",
  "conversation_history",
  "agent_coordination",
  "tools",
  "step_results",
  "user_request",
  "instructions"
] as const

/**
 * Escapes text for inclusion inside a section: `&`, `<` and `>` become
 * entities, so no tag can be closed or forged.
 *
 * @since 0.1.0
 */
export const escapeContent = (text: string): string => {
  // The same text is often escaped twice in a row (an enrichment goes into
  // both the planning and the synthesis prompt): the last answer is kept.
  if (text === lastEscaped.text) return lastEscaped.escaped
  const escaped = specialChar.test(text) ? text.replace(specialChars, entityOf) : text
  lastEscaped.text = text
  lastEscaped.escaped = escaped
  return escaped
}

const specialChar = /[&<>]/
const specialChars = /[&<>]/g
// One pass over the text (three `replace` calls made three copies).
const entityOf = (char: string): string => (char === "&" ? "&amp;" : char === "<" ? "&lt;" : "&gt;")
const lastEscaped = { text: "", escaped: "" }

/**
 * Reverses {@link escapeContent}.
 *
 * @since 0.1.0
 */
export const unescapeContent = (text: string): string =>
  text.includes("&") ? text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&") : text

const reservedTag = new RegExp(`<(/?\\s*(?:${ReservedSections.join("|")})\\b)`, "gi")

/**
 * Neutralizes reserved section tags in verbatim content (the user profile is
 * inserted as-is so it can carry its own `<user_profile>` block, but it may
 * not open or close a framework section).
 *
 * @since 0.1.0
 */
export const neutralizeReservedTags = (text: string): string => text.replace(reservedTag, "&lt;$1")

/**
 * Reads the (unescaped) content of the first `<tag>…</tag>` section of a
 * prompt built by the default builder, if present. Used by the offline model.
 *
 * @since 0.1.0
 */
export const readSection = (prompt: string, tag: string): string | undefined => {
  const open = `<${tag}>\n`
  const start = prompt.indexOf(open)
  if (start < 0) return undefined
  const end = prompt.indexOf(`\n</${tag}>`, start + open.length)
  if (end < 0) return undefined
  return unescapeContent(prompt.slice(start + open.length, end))
}
