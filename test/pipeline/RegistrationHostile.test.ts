import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { HookRegistration } from "../support/Internal.js"

describe("registration of hostile JavaScript input", () => {
  it("C2: an entry whose name getter throws is an InvalidOrchestratorConfig, not a crash", () => {
    const hostile = {
      get name(): string {
        throw new Error("getter exploded")
      }
    }
    const result = HookRegistration.validate([hostile])
    expect(Either.isLeft(result) && result.left._tag).toBe("InvalidOrchestratorConfig")
    expect(Either.isLeft(result) && result.left._tag === "InvalidOrchestratorConfig" && result.left.detail).toMatch(
      /getter exploded/
    )
  })
})
