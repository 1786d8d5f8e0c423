/**
 * Counts the fibers started under it (a tracking supervisor sees only the
 * live ones): how a test tells that a path forks no fiber of its own.
 */
import { Effect, Supervisor } from "effect"

export class StartCounter extends Supervisor.AbstractSupervisor<number> {
  started = 0
  get value() {
    return Effect.sync(() => this.started)
  }
  override onStart(): void {
    this.started++
  }
}
