/**
 * The hooks that take part in one stage: those with a handler for it, in
 * registration order, with the span name computed once at construction.
 */
import type { HookStage } from "../../domain/ExecutionRecord.js"
import type * as Hook from "../Hook.js"

/** The hooks that take part in one stage, with their handler and span name. */
export const participantsOf = <K extends "beforePlanning" | "afterPlanning" | "afterExecution" | "afterSynthesis">(
  hooks: ReadonlyArray<Hook.Hook<never>>,
  handler: K,
  stage: HookStage
): ReadonlyArray<
  { readonly hook: Hook.Hook<never>; readonly handler: NonNullable<Hook.Hook<never>[K]>; readonly spanName: string }
> => {
  const out: Array<
    { readonly hook: Hook.Hook<never>; readonly handler: NonNullable<Hook.Hook<never>[K]>; readonly spanName: string }
  > = []
  for (const hook of hooks) {
    const f = hook[handler]
    if (f !== undefined && f !== null) out.push({ hook, handler: f, spanName: `pipeline.hook.${stage}.${hook.name}` })
  }
  return out
}
