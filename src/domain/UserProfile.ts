/**
 * The `<user_profile>` block for the `user_profile` enrichment (seed 000
 * §5.3, C7). The default prompt builder inserts `user_profile` verbatim —
 * its writer supplies the whole block — so whatever the writer puts there
 * reaches the model as it is. {@link render} builds that block with every
 * value escaped: no name or fact can close the block, open or forge another
 * section, or pass itself off as a further fact.
 *
 * @since 0.1.0
 */
import { escapeContent } from "./PromptSections.js"

/**
 * What is known about the user, as a writer has it (usually from a user
 * store or memory): an optional name and a list of facts, each a short
 * sentence.
 *
 * @since 0.1.0
 * @category models
 */
export interface Profile {
  /** The user's name; an empty name is left out. */
  readonly name?: string | undefined
  /** One line each, in order; a fact with line breaks continues on indented lines. */
  readonly facts: ReadonlyArray<string>
}

// A line break inside a value is kept and the next line indented by two
// spaces, so every line of the block that starts with "- " is a fact the
// writer listed, never one a value forged.
const lineBreak = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g
const value = (text: string): string => escapeContent(text).replace(lineBreak, "$&  ")

/**
 * Renders a profile as the `<user_profile>` block the default prompt
 * builder inserts: `name: …` first (when there is a name), then one
 * `- …` line per fact. Values are escaped as section content is (`&`, `<`,
 * `>` and their look-alikes become entities), so `PromptBuilder.readSection(
 * prompt, "user_profile")` reads the block's text back. A profile with no
 * name and no facts renders as `""`, which the builder does not render at all.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook, UserProfile } from "effect-agent-pipeline"
 *
 * const profile = Hook.make({
 *   name: "user-profile",
 *   beforePlanning: () =>
 *     Effect.succeed({
 *       enrichments: {
 *         user_profile: UserProfile.render({ name: "Ada", facts: ["prefers EUR", "trades from Lisbon"] })
 *       }
 *     })
 * })
 * // <user_profile>
 * // name: Ada
 * // - prefers EUR
 * // - trades from Lisbon
 * // </user_profile>
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (profile: Profile): string => {
  const lines = profile.name === undefined || profile.name.length === 0 ? [] : [`name: ${value(profile.name)}`]
  for (const fact of profile.facts) lines.push(`- ${value(fact)}`)
  return lines.length === 0 ? "" : `<user_profile>\n${lines.join("\n")}\n</user_profile>`
}
