/**
 * Which `HookGroup.make` call a hook came from: registration tells two
 * groups of the same name apart (a configuration error) from one group's
 * hooks, and a group registered twice from two hooks of the same name.
 * Hooks are keyed weakly: a group that is dropped is forgotten.
 */

const members = new WeakMap<object, object>()

/** Marks `hook` as a member of the group `token` stands for. */
export const join = <H extends object>(hook: H, token: object): H => {
  members.set(hook, token)
  return hook
}

/** The group `hook` was made in, if `HookGroup.make` made it. */
export const tokenOf = (hook: object): object | undefined => members.get(hook)
