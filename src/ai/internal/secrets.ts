/**
 * A provider's credentials, in every form they could take in text that is
 * about to be kept (an error's body excerpt, a URL, a transport failure's
 * description): the key itself — which also covers `Bearer <key>` — and its
 * base64 and base64url encodings (HTTP Basic credentials, tokens echoed
 * encoded). Text is scrubbed only on the failure path: nothing here runs on
 * a call that succeeds.
 *
 * A key shorter than {@link minSecretLength} characters is not looked for
 * in text (scrubbing every `k` out of a message would destroy it); headers,
 * where a key is really sent, are dropped whatever the key (safeAiError.ts).
 */
import { Redacted } from "effect"

/**
 * The shortest key looked for in text.
 *
 * @since 0.1.0
 * @category constants
 */
export const minSecretLength = 8

/**
 * What replaces a secret.
 *
 * @since 0.1.0
 * @category constants
 */
export const redactedText = "<redacted>"

/**
 * The forms of a set of keys, longest first.
 *
 * @since 0.1.0
 * @category models
 */
export interface Secrets {
  readonly forms: ReadonlyArray<string>
}

/**
 * No secrets: text is left as it is.
 *
 * @since 0.1.0
 * @category constants
 */
export const none: Secrets = { forms: [] }

const base64 = (text: string): string => Buffer.from(text, "utf8").toString("base64")
const base64url = (text: string): string => Buffer.from(text, "utf8").toString("base64url")

/**
 * The forms of `keys` (computed once, when a provider's Layer is built).
 *
 * @since 0.1.0
 * @category utils
 */
export const secretsOf = (keys: ReadonlyArray<Redacted.Redacted | undefined>): Secrets => {
  const forms = new Set<string>()
  for (const key of keys) {
    if (key === undefined) continue
    const value = Redacted.value(key).trim()
    if (value.length < minSecretLength) continue
    forms.add(value)
    // base64 without its padding: the encoding of a longer text that starts
    // with the key (`Bearer …`, `user:…`) shares its first characters only
    // up to the last whole 3-byte group.
    forms.add(base64(value).replace(/=+$/, ""))
    forms.add(base64url(value))
    forms.add(base64(`Bearer ${value}`).replace(/=+$/, ""))
  }
  return { forms: [...forms].filter((form) => form.length >= minSecretLength).sort((a, b) => b.length - a.length) }
}

/**
 * `text` with every form of the secrets replaced by {@link redactedText}.
 *
 * @since 0.1.0
 * @category utils
 */
export const scrub = (text: string, secrets: Secrets): string => {
  let out = text
  for (const form of secrets.forms) if (out.includes(form)) out = out.split(form).join(redactedText)
  return out
}
