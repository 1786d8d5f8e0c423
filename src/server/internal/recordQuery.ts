/**
 * `GET /v1/records`: the query parameters as the store's `ListQuery`, each
 * checked here so a bad one is a 400 naming it (`param`), and a store's
 * page as the response body (`RecordList`).
 */
import { Effect, Schema } from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import type { ListedStatus, ListQuery, RecordPage } from "../../stores/contract/ExecutionStore.js"
import * as ApiError from "../ApiError.js"
import { ListedStatus as ListedStatusSchema, type RecordList, type RecordQuery, type RecordSummary } from "./api.js"

const isStatus = Schema.is(ListedStatusSchema)

const bad = (param: string, message: string): ApiError.BadRequest =>
  new ApiError.BadRequest({ error: { type: "invalid_request_error", code: "malformed", message, param } })

const epochMillis = (
  param: string,
  value: string | undefined
): Effect.Effect<number | undefined, ApiError.BadRequest> =>
  value === undefined
    ? Effect.succeed(undefined)
    : /^\d{1,16}$/.test(value)
    ? Effect.succeed(Number(value))
    : Effect.fail(bad(param, `${param} must be a time in epoch milliseconds (digits only)`))

/** The store query of the request's parameters. */
export const toListQuery = (params: typeof RecordQuery.Type): Effect.Effect<ListQuery, ApiError.BadRequest> =>
  Effect.gen(function*() {
    let status: Array<ListedStatus> | undefined
    if (params.status !== undefined) {
      status = []
      for (const part of params.status.split(",")) {
        const value = part.trim()
        if (!isStatus(value)) {
          return yield* bad(
            "status",
            `status must be a comma-separated list of ${
              ListedStatusSchema.members.flatMap((m) => m.literals).join(", ")
            }`
          )
        }
        status.push(value)
      }
    }
    if (params.hook !== undefined && params.hook === "") return yield* bad("hook", "hook must not be empty")
    let limit: number | undefined
    if (params.limit !== undefined) {
      if (!/^\d{1,9}$/.test(params.limit)) return yield* bad("limit", "limit must be a whole number")
      limit = Number(params.limit)
    }
    const startedFrom = yield* epochMillis("startedFrom", params.startedFrom)
    const startedBefore = yield* epochMillis("startedBefore", params.startedBefore)
    return { status, hook: params.hook, limit, startedFrom, startedBefore, cursor: params.cursor }
  })

const requestPreview = 200

const decisive = new Set(["continue", "none"])

/** The first characters of a text, never ending in half a surrogate pair. */
const preview = (text: string): string => {
  if (text.length <= requestPreview) return text
  const cut = text.slice(0, requestPreview)
  const last = cut.charCodeAt(cut.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut
}

/** A record's row in the list. */
export const summaryOf = (record: ExecutionRecord): RecordSummary => {
  const models = new Set<string>()
  for (const call of record.modelCalls ?? []) models.add(call.modelId ?? call.model)
  const decisions =
    record.hookInvocations.filter((run) => run.decision !== undefined && !decisive.has(run.decision.action)).length
  const traceId = record.metadata["traceId"]
  return {
    requestId: record.requestId,
    status: record.lifecycle?.status ?? "unknown",
    mode: record.mode,
    ...(record.lifecycle === undefined ? {} : { startedAt: record.lifecycle.startedAt }),
    ...(record.lifecycle?.endedAt === undefined ? {} : { endedAt: record.lifecycle.endedAt }),
    request: preview(record.request),
    models: [...models],
    hookCount: record.hookInvocations.length,
    decisions,
    ...(record.checkpointId === undefined ? {} : { checkpointId: record.checkpointId }),
    ...(typeof traceId === "string" ? { traceId } : {})
  }
}

/** The response body of a page. */
export const toRecordList = (page: RecordPage): typeof RecordList.Type => ({
  records: page.records.map(summaryOf),
  undecodable: page.undecodable.length,
  ...(page.next === undefined ? {} : { next: page.next })
})
