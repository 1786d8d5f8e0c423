/**
 * The crash harness of the durable request tests: runner processes
 * (fixtures/requestChild.ts) submit a batch of requests and are killed
 * (`kill -9`) at random moments while the requests run, then restarted,
 * until every request has ended; then {@link judge} holds the shared event
 * log and the stored records to issue 24's promises.
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ExecutionRecord } from "../../src/domain/ExecutionRecord.js"
import { type EventWorkspace, eventWorkspace } from "./eventWorkspace.js"
import type { RequestChildCommand, RequestChildEvent } from "./fixtures/requestChild.js"

const childScript = fileURLToPath(new URL("./fixtures/requestChild.ts", import.meta.url))

/** A crash scenario's folder, log and runner processes (see eventWorkspace.ts). */
export type RequestWorkspace = EventWorkspace<RequestChildEvent, Omit<RequestChildCommand, "log" | "keyFile">>

/** The runners share one checkpoint key file in the workspace. */
export const requestWorkspace = (): RequestWorkspace =>
  eventWorkspace(childScript, "eap-durable-requests-", (dir) => ({
    keyFile: path.join(dir, "checkpoint-key")
  }))

/** Requests that have logged their end (by any process). */
export const completed = (events: ReadonlyArray<RequestChildEvent>): ReadonlySet<string> =>
  new Set(events.filter((e) => e.ev === "complete").map((e) => e.requestId ?? ""))

/** A pseudo-random sequence from a seed (the kill moments: a failing run can be replayed from its seed). */
export const seeded = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0
    return state / 4_294_967_296
  }
}

/** The record's attempt markers of `region` (`durable: <region> started (attempt n)`). */
export const attemptsOf = (record: ExecutionRecord, region: string): number =>
  record.diagnostics.filter((d) => d.startsWith(`durable: ${region} started (attempt `)).length

/** What the judge found wrong with one request, if anything. */
export const judge = (
  requestId: string,
  events: ReadonlyArray<RequestChildEvent>,
  record: ExecutionRecord | undefined,
  killed: ReadonlySet<number>
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const mine = events.filter((e) => e.requestId === requestId || e.key?.startsWith(`${requestId}/`))
  const ends = mine.filter((e) => e.ev === "complete")
  if (ends.length === 0) problems.push("never completed")
  for (const end of ends) {
    if (end.result !== `done (${requestId})`) problems.push(`ended with ${end.result}`)
  }
  if (record === undefined) return [...problems, "no record"]
  if (record.lifecycle?.status !== "succeeded") problems.push(`record ${record.lifecycle?.status}`)
  if (record.mode !== "durable") problems.push(`record mode ${record.mode}`)
  if (record.finalResponse !== `done (${requestId})`) {
    problems.push(
      `record response ${record.finalResponse} ${
        JSON.stringify(record.diagnostics)
      } rev ${record.recordRevision} raw ${record.rawDraft}`
    )
  }
  const steps = record.phases.flatMap((p) => p.steps)
  if (record.phases.length !== 1 || steps.length !== 3 || steps.some((s) => s.status !== "succeeded")) {
    problems.push(`record phases ${JSON.stringify(record.phases.map((p) => p.steps.map((s) => s.status)))}`)
  }
  for (const id of ["c1", "c2", "c3"]) {
    const key = `${requestId}/${id}`
    const starts = mine.filter((e) => e.ev === "tool-start" && e.key === key)
    if (starts.length === 0) problems.push(`${key} never ran`)
    // Every attempt but the last was cut short by a kill: a completed call never runs again.
    for (const cut of starts.slice(0, -1)) {
      if (!killed.has(cut.pid)) problems.push(`${key} ran again after pid ${cut.pid}, which was not killed`)
    }
    const pids = starts.map((s) => s.pid)
    if (new Set(pids).size !== pids.length) problems.push(`${key} ran twice in one process`)
    // The record shows every attempt (a start is marked before the tool is called).
    const marked = attemptsOf(record, `phase/1/step/${id}`)
    if (marked < starts.length) problems.push(`${key}: ${starts.length} runs, ${marked} attempts recorded`)
  }
  // The request's regions in order. Once a process has gone on to a later
  // region, the earlier one had completed (its result stored): nothing may
  // run it again, in any process.
  const order = [
    (e: RequestChildEvent) => e.ev === "tool-start" && e.key === `${requestId}/c1`,
    (e: RequestChildEvent) => e.ev === "tool-start" && e.key === `${requestId}/c2`,
    (e: RequestChildEvent) => e.ev === "tool-start" && e.key === `${requestId}/c3`,
    (e: RequestChildEvent) => e.ev === "after-execution",
    (e: RequestChildEvent) => e.ev === "after-synthesis"
  ]
  order.forEach((isRegion, i) => {
    const runs = mine.filter(isRegion)
    runs.forEach((run, n) => {
      const wentOn = mine.some((e) => e.pid === run.pid && e.t >= run.t && order.slice(i + 1).some((later) => later(e)))
      if (wentOn && n < runs.length - 1) {
        problems.push(`region ${i + 1} completed in pid ${run.pid}, yet ran again (${runs.length} runs)`)
      }
    })
  })
  for (const [ev, region] of [["after-execution", "after_execution"], ["after-synthesis", "synthesis"]] as const) {
    const runs = mine.filter((e) => e.ev === ev)
    if (runs.length === 0) problems.push(`${ev} hook never ran`)
    for (const cut of runs.slice(0, -1)) {
      if (!killed.has(cut.pid)) problems.push(`${ev} ran again after pid ${cut.pid}, which was not killed`)
    }
    if (attemptsOf(record, region) < runs.length) problems.push(`${ev}: more runs than recorded attempts`)
  }
  return problems
}
