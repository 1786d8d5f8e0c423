/**
 * The static dictionary of body format 2 (`recordDictionary.ts`) holds the
 * default prompt builder's instructions, which every prompt it builds
 * starts with. When this fails, the prompt builder's texts changed: append
 * the new texts to the dictionary (never change or remove an entry — bodies
 * written with it must decode forever) and raise the body format.
 */
import { describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import { dictionary } from "../../src/domain/internal/recordDictionary.js"
import { defaultBuilder } from "../../src/pipeline/PromptBuilder.js"

describe("record body: the static dictionary", () => {
  const input = { request: "q", enrichments: { rag_context: "notes" }, tools: [], phase: 1, priorResults: [] }

  it("record body: every prompt the default builder makes starts with a dictionary entry", () => {
    for (
      const prompt of [
        defaultBuilder.buildPlanningPrompt(input),
        defaultBuilder.buildContinuationPrompt({ ...input, phase: 2 }),
        defaultBuilder.buildSynthesisPrompt({ request: "q", enrichments: {}, steps: [] })
      ]
    ) {
      expect(dictionary.some((entry) => prompt.startsWith(entry))).toBe(true)
    }
  })

  it("record body: the dictionary's entries are frozen (format 2)", () => {
    expect(dictionary.length).toBe(2)
    const digest = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16)
    expect(dictionary.map(digest)).toEqual(["a5c3458bebac5f78", "7c5d1d52c0b62a41"])
  })
})
