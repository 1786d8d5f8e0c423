/**
 * Hook groups (seed 002 "HookGroup"): a named set of hooks — a guardrail
 * suite, an audit package, a team's hooks — registered as a unit.
 *
 * A group is an array of hooks, so it goes wherever a hook list goes
 * (`Agent.layer({ hooks })`, `PipelineHooks.layer`), spread into a longer
 * list (`[...guardrails, audit]`) or combined with {@link merge}. Each of
 * its hooks carries the group's name in its `group` field, and every
 * operation hook call of those hooks gets it as `RunMeta.group`.
 *
 * Names are unique: two groups with the same name, or a hook name that
 * appears twice (in two groups, twice in one group, or a group registered
 * twice), fail registration with `InvalidHookSubscription` (reason
 * `duplicate_id`), which names the groups.
 *
 * @since 0.1.0
 */
import { join } from "../runtime/internal/hookGroups.js"
import type * as Hook from "./Hook.js"

/**
 * A named group of hooks: the hooks themselves (each carrying the group's
 * name in `group`), and `name`.
 *
 * @since 0.1.0
 * @category models
 */
export interface HookGroup<H extends Hook.Any = Hook.Any> extends ReadonlyArray<H> {
  /** The group's name: unique among the groups registered together. */
  readonly name: string
}

/**
 * Makes a named group of hooks: copies of `hooks`, each carrying `name` in
 * its `group` field (a hook that was in another group moves to this one).
 * A name that is not a non-empty string fails registration.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Hook, HookGroup } from "effect-agent-pipeline"
 *
 * const guardrails = HookGroup.make("guardrails", [
 *   Hook.make({
 *     name: "no-trades",
 *     guard: { toolCall: (call, proceed) => call.payload.capability === "execute_trade" ? Hook.deny("no trades") : proceed }
 *   }),
 *   Hook.make({
 *     name: "log-rounds",
 *     around: { inference: (_call, meta) => Effect.log(`${meta.group}: round ${meta.iteration}`) }
 *   })
 * ])
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <H extends Hook.Any>(name: string, hooks: ReadonlyArray<H>): HookGroup<H> => {
  const token = {}
  // Copies: the caller's hooks stay as they are, and each copy knows its group.
  const members = hooks.map((hook): H => join({ ...hook, group: name }, token))
  return Object.freeze(Object.assign(members, { name }))
}

/**
 * Combines groups into one hook list, in order: the groups' hooks, each
 * keeping its group. Group names and hook names must be unique across
 * them — checked when the list is registered.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Hook, HookGroup, OfflineModel } from "effect-agent-pipeline"
 *
 * const audit = HookGroup.make("audit", [
 *   Hook.make({ name: "audit-errors", onError: (call, result) => Effect.log(`${call.operation} ${result.outcome}`) })
 * ])
 * const rounds = HookGroup.make("rounds", [
 *   Hook.make({ name: "round-log", around: { inference: (_call, meta) => Effect.log(`round ${meta.iteration}`) } })
 * ])
 *
 * const AgentLive = Agent.layer({ model: OfflineModel.layer, tools: [], hooks: HookGroup.merge(audit, rounds) })
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const merge = <const Groups extends ReadonlyArray<HookGroup>>(
  ...groups: Groups
): ReadonlyArray<Groups[number][number]> => Object.freeze(groups.flatMap((group) => [...group]))
