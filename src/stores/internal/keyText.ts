/**
 * A checkpoint key written as text — in `AGENT_CHECKPOINT_KEY`, a key file
 * or a secrets manager — read into its bytes: hex or base64, at least 32
 * bytes. What is wrong with a key is said without quoting it.
 */
import { Either } from "effect"

/** The shortest key accepted, in bytes: as long as HMAC-SHA256's output. */
export const minimumKeyBytes = 32

const hexText = /^[0-9a-fA-F]+$/
const base64Text = /^[A-Za-z0-9+/_-]+={0,2}$/

/**
 * A key's bytes from its text form: hex (a string of hex digits only, of
 * even length, is read as hex) or base64 (standard or URL-safe), surrounding
 * whitespace ignored; at least {@link minimumKeyBytes} bytes.
 */
export const decodeKeyText = (text: string): Either.Either<Uint8Array, string> => {
  const trimmed = text.trim()
  const bytes = hexText.test(trimmed) && trimmed.length % 2 === 0
    ? Buffer.from(trimmed, "hex")
    : base64Text.test(trimmed)
    ? Buffer.from(trimmed, "base64")
    : undefined
  if (bytes === undefined) {
    return Either.left(
      `a checkpoint key is written as hex or base64 (${trimmed.length === 0 ? "it is empty" : "it is neither"})`
    )
  }
  if (bytes.length < minimumKeyBytes) {
    return Either.left(
      `a checkpoint key needs at least ${minimumKeyBytes} bytes (64 hex digits or 44 base64 characters); this one has ${bytes.length} (make one with: openssl rand -hex 32)`
    )
  }
  return Either.right(new Uint8Array(bytes))
}
