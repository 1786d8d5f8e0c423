/**
 * A user fact's deterministic id: the same fact extracted twice (case,
 * spacing and trailing punctuation aside) gets the same id, so the second
 * write replaces the first instead of piling up duplicates.
 */
import { createHash } from "node:crypto"

const trailing = /[\s.!;,]+$/u
const spaces = /\s+/gu

/**
 * The text a fact's id is derived from: Unicode NFKC, lower case, runs of
 * white space as one space, no trailing `.`, `!`, `;` or `,`.
 *
 * @since 0.1.0
 * @category utils
 */
export const normalize = (text: string): string =>
  text.normalize("NFKC").toLowerCase().replace(spaces, " ").trim().replace(trailing, "")

/**
 * The id of a fact: a digest of its tenant, user and normalized text
 * (bounded length whatever the inputs, and no separator a user id could
 * forge: the parts are JSON-encoded before hashing).
 *
 * @since 0.1.0
 * @category utils
 */
export const factId = (userId: string, text: string, tenant?: string | undefined): string =>
  `uf-${
    createHash("sha256").update(JSON.stringify([tenant ?? null, userId, normalize(text)])).digest("hex").slice(0, 40)
  }`
