/**
 * Body format 2's texts (`recordCompact.ts`): a long text written more than
 * once in a record — an enrichment a hook reported, which the prompts carry;
 * a draft that is also a model call's output — is written once (`t`) and
 * referred to by index; a prompt becomes a list of pieces, the default
 * prompt builder's instructions referred to in the static dictionary.
 */
import type { HookEffect, HookInvocation } from "../ExecutionRecord.js"
import { longText, type Table } from "./recordCompact.js"
import { dictionary } from "./recordDictionary.js"

/** The long texts of the record's effects' data (top-level string members) — enrichments, mostly. */
export const collectEffectTexts = (runs: ReadonlyArray<HookInvocation>, texts: Table): void => {
  for (let i = 0; i < runs.length; i++) {
    const effects = runs[i]!.effects
    for (let j = 0; j < effects.length; j++) {
      const data = effects[j]!.data
      if (data === null || typeof data !== "object" || Array.isArray(data)) continue
      for (const key in data) {
        const member = (data as Record<string, unknown>)[key]
        if (typeof member === "string" && member.length >= longText) texts.of(member)
      }
    }
  }
}

/** An effect, its data's long string members replaced by text indexes (`dr` names them). */
export const encodeEffect = (effect: HookEffect, texts: Table): object => {
  const data = effect.data
  if (data === null || typeof data !== "object" || Array.isArray(data)) return effect
  let refs: Array<string> | undefined
  let out: Record<string, unknown> | undefined
  for (const key in data) {
    const member = (data as Record<string, unknown>)[key]
    if (typeof member !== "string" || member.length < longText) continue
    const at = texts.find(member)
    if (at === undefined) continue
    refs ??= []
    out ??= { ...data }
    refs.push(key)
    out[key] = at
  }
  return refs === undefined ? effect : { ...effect, data: out, dr: refs }
}

/** Cuts every occurrence of `item` out of the pieces' strings, leaving `ref` in its place. */
const cutOut = (parts: Array<string | number>, item: string, ref: number): void => {
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (typeof part !== "string" || part.length < item.length) continue
    const at = part.indexOf(item)
    if (at < 0) continue
    const split: Array<string | number> = []
    if (at > 0) split.push(part.slice(0, at))
    split.push(ref)
    const rest = part.slice(at + item.length)
    if (rest.length > 0) split.push(rest)
    parts.splice(i, 1, ...split)
    // The rest may hold the text again: it is looked at next.
    i += split.length - 2
  }
}

/**
 * A prompt as pieces — strings, the indexes of the record's texts (`t`) it
 * contains, and `-1 - i` for entry `i` of the static dictionary — or the
 * prompt itself when it contains none.
 */
export const promptPieces = (text: string, texts: Table): string | Array<string | number> => {
  if (text.length < longText) return text
  let parts: Array<string | number> | undefined
  for (let i = 0; i < dictionary.length; i++) {
    const entry = dictionary[i]!
    if (!text.includes(entry)) continue
    parts ??= [text]
    cutOut(parts, entry, -1 - i)
  }
  const items = texts.items
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!
    if (item.length > text.length || (parts === undefined && !text.includes(item))) continue
    parts ??= [text]
    cutOut(parts, item, i)
  }
  return parts ?? text
}

/** A text (a draft, an output): its index when it is one of the record's texts. */
export const textRef = (text: string, texts: Table): string | number =>
  (text.length < longText ? undefined : texts.find(text)) ?? text
