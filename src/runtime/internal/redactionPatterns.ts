/**
 * The built-in patterns of `Redaction` (issue 23): one bounded RegExp per
 * kind of secret or personal data, with the longest text it can match.
 *
 * Every pattern is written so the stream guard can hold back a bounded
 * window: no unbounded quantifier, lookarounds of a few characters, and no
 * nested ambiguous repetition (each repeated group ends in a character its
 * body cannot contain), so a failed attempt costs at most its maximum length.
 * A `trigger` is a short literal every match begins with: text without one
 * near the end of a stream need not wait for that pattern's window.
 */

/** How a built-in pattern is declared. */
export interface PatternSpec {
  readonly kind: string
  readonly regex: RegExp
  /** The longest text the regex can match. */
  readonly maxLength: number
  /** What every match starts with (a global RegExp), and its longest length. */
  readonly trigger?: { readonly regex: RegExp; readonly length: number }
  /** A literal every match contains, starting fewer than `within` characters after the match's start. */
  readonly needs?: { readonly literal: string; readonly within: number }
  /** A check of the finding's text (Luhn, digit counts). */
  readonly validate?: (text: string) => boolean
}

/** Whether a digit string passes the Luhn check (payment cards). */
export const luhn = (digits: string): boolean => {
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return sum % 10 === 0
}

const digitsOf = (text: string): string => text.replace(/\D/g, "")

// Keys must look machine-made: a digit and an upper-case letter somewhere
// (keeps `sk-` prose such as "sk-learn-is-a-python-library" out).
const machineMade = (text: string): boolean => /\d/.test(text) && /[A-Z]/.test(text)

/**
 * The built-in kinds, in tie-break order: when two findings start at the same
 * place and end at the same place, the earlier kind names the marker.
 */
export const builtIns: ReadonlyArray<PatternSpec> = [
  {
    kind: "private_key",
    // The block up to its END line, or 4,096 characters of it when the END
    // line is missing (a truncated key is still a key).
    regex:
      /-----BEGIN (?:[A-Z0-9]{1,10} ){0,3}PRIVATE KEY(?: BLOCK)?-----(?:(?!-----END )[\s\S]){0,4096}(?:-----END (?:[A-Z0-9]{1,10} ){0,3}PRIVATE KEY(?: BLOCK)?-----)?/g,
    maxLength: 2 * (11 + 33 + 6 + 16) + 4096,
    trigger: { regex: /-----BEGIN /g, length: 11 }
  },
  {
    kind: "anthropic_key",
    regex: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,200}/g,
    maxLength: 207,
    trigger: { regex: /sk-ant-/g, length: 7 },
    validate: machineMade
  },
  {
    kind: "openai_key",
    regex: /(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,200}/g,
    maxLength: 3 + 8 + 200,
    trigger: { regex: /sk-/g, length: 3 },
    validate: machineMade
  },
  {
    kind: "aws_access_key_id",
    regex: /(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])/g,
    maxLength: 20,
    trigger: { regex: /AKIA|ASIA|ABIA|ACCA/g, length: 4 }
  },
  {
    kind: "aws_secret_key",
    // Only in its assignment context: 40 base64 characters are otherwise common.
    // Quotes may come escaped (`\"`, `\\\"`): the context inside JSON text, once or twice encoded.
    regex:
      /(?<![A-Za-z0-9_])aws_secret_access_key(?:\\{0,3}["'])?[ \t]{0,3}[:=][ \t]{0,3}(?:\\{0,3}["'])?(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi,
    maxLength: 21 + 4 + 3 + 1 + 3 + 4 + 40,
    trigger: { regex: /aws_secret_access_key/gi, length: 21 }
  },
  {
    kind: "github_token",
    regex: /(?<![A-Za-z0-9_])(?:gh[opsur]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,244})/g,
    maxLength: 255,
    trigger: { regex: /gh[opsur]_|github_pat_/g, length: 11 }
  },
  {
    kind: "slack_token",
    regex: /(?<![A-Za-z0-9_-])xox[abpors]-[A-Za-z0-9-]{10,250}/g,
    maxLength: 255,
    trigger: { regex: /xox[abpors]-/g, length: 5 }
  },
  {
    kind: "google_api_key",
    regex: /(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g,
    maxLength: 39,
    trigger: { regex: /AIza/g, length: 4 }
  },
  {
    kind: "stripe_key",
    regex: /(?<![A-Za-z0-9_])[sr]k_(?:live|test)_[A-Za-z0-9]{16,247}/g,
    maxLength: 255,
    trigger: { regex: /[sr]k_(?:live|test)_/g, length: 8 }
  },
  {
    kind: "bearer_token",
    // The token only: "Authorization: Bearer [REDACTED:bearer_token]" stays readable.
    regex: /(?<![A-Za-z0-9_])[Bb]earer[ \t]{1,3}(?<secret>[A-Za-z0-9._~+/-]{16,2048}={0,2})/g,
    maxLength: 6 + 3 + 2048 + 2,
    trigger: { regex: /[Bb]earer[ \t]/g, length: 7 }
  },
  {
    kind: "jwt",
    regex: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,500}\.eyJ[A-Za-z0-9_-]{5,2000}\.[A-Za-z0-9_-]{10,1000}/g,
    maxLength: 3 + 500 + 4 + 2000 + 1 + 1000,
    trigger: { regex: /eyJ/g, length: 3 }
  },
  {
    kind: "email",
    regex:
      /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,4}[A-Za-z]{2,24}/g,
    maxLength: 64 + 1 + 4 * 64 + 24,
    needs: { literal: "@", within: 65 }
  },
  // Phone numbers, conservatively: international numbers with a leading +,
  // North American numbers with separators, and national numbers with a
  // trunk 0 and separators. Bare digit runs, dates and versions are left alone.
  {
    kind: "phone",
    regex: /(?<![\w+])\+[1-9]\d{0,14}(?:[ .-](?:\(\d{1,4}\)\d{0,4}|\d{1,5})){0,5}(?![\w]|[.-]\d)/g,
    maxLength: 1 + 15 + 5 * 11,
    validate: (text) => {
      const n = digitsOf(text).length
      return n >= 8 && n <= 15
    }
  },
  {
    kind: "phone",
    regex: /(?<![\w+.-])(?:\([2-9]\d{2}\) ?|[2-9]\d{2}[-. ])[2-9]\d{2}[-. ]\d{4}(?![\w]|[.-]\d)/g,
    maxLength: 14
  },
  {
    kind: "phone",
    regex: /(?<![\w+.-])0\d{2,4}[ -]\d{3,4}[ -]?\d{3,4}(?![\w]|[.-]\d)/g,
    maxLength: 15
  },
  {
    kind: "card_number",
    // The common 4-4-4-4 grouping on its own, so a number written after a
    // card ("4111 1111 1111 1111 123") cannot hide it by making the longer
    // run fail the Luhn check.
    regex: /(?<!\d)[2-6]\d{3}(?:[ -]?\d{4}){3}(?!\d)/g,
    maxLength: 19,
    validate: (text) => luhn(digitsOf(text))
  },
  {
    kind: "card_number",
    // 13–19 digits, optionally grouped by spaces or dashes, Luhn-checked.
    regex: /(?<!\d)[2-6]\d{3}(?:[ -]?\d){9,15}(?!\d)/g,
    maxLength: 19 + 18,
    validate: (text) => luhn(digitsOf(text))
  }
]
