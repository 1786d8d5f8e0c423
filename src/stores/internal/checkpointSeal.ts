/**
 * The seal of a HITL checkpoint (DESIGN §7): `planDigest`, the SHA-256 of
 * the plan's canonical JSON, and `mac`, an HMAC-SHA256 with the agent's key
 * over everything else. `CheckpointKey` holds the key and calls these; the
 * key never leaves its `Redacted`, and no failure text quotes it or the
 * expected MAC.
 */
import { Either, Redacted, Schema } from "effect"
import { createHash, createHmac, timingSafeEqual } from "node:crypto"
import { Checkpoint, HexDigest, planText, sealedText, type Unsealed } from "../../domain/Checkpoint.js"
import type { RoutingPlan } from "../../domain/RoutingPlan.js"

/**
 * Prefixed to the MAC's input: a MAC made for something else with the same
 * key can never pass for a checkpoint's (and a later layout gets a new tag).
 */
const macContext = "effect-agent-pipeline/Checkpoint/v1\n"

// A checkpoint built without validation may hold anything in these fields.
const isHexDigest = Schema.is(HexDigest)

/** What an error says, for a diagnostic; never throws. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The hex SHA-256 of the plan's canonical JSON text. */
export const planDigest = (plan: RoutingPlan): string => createHash("sha256").update(planText(plan)).digest("hex")

const macOf = (key: Redacted.Redacted<Uint8Array>, fields: Parameters<typeof sealedText>[0]): string =>
  createHmac("sha256", Redacted.value(key)).update(macContext).update(sealedText(fields)).digest("hex")

/** The checkpoint with its `planDigest` and its `mac` computed with `key`. */
export const seal = (key: Redacted.Redacted<Uint8Array>, fields: Unsealed): Checkpoint => {
  const sealed = { ...fields, planDigest: planDigest(fields.plan) }
  return new Checkpoint({ ...sealed, mac: macOf(key, sealed) })
}

/**
 * `Right(checkpoint)` when its `planDigest` is its plan's and its `mac` was
 * computed with `key` over its content; otherwise `Left` with why not.
 * `origin` names where the key came from, for the message.
 */
export const verify = (
  key: Redacted.Redacted<Uint8Array>,
  origin: string,
  checkpoint: Checkpoint
): Either.Either<Checkpoint, string> => {
  try {
    if (!isHexDigest(checkpoint.planDigest) || checkpoint.planDigest !== planDigest(checkpoint.plan)) {
      return Either.left("its planDigest is not the digest of its plan")
    }
    if (!isHexDigest(checkpoint.mac)) return Either.left("its mac is not an HMAC-SHA256")
    const expected = Buffer.from(macOf(key, checkpoint), "hex")
    return timingSafeEqual(expected, Buffer.from(checkpoint.mac, "hex"))
      ? Either.right(checkpoint)
      : Either.left(`its mac does not verify with this agent's checkpoint key (${origin})`)
  } catch (error) {
    return Either.left(`its content does not encode: ${messageOf(error)}`)
  }
}
