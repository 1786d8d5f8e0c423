#!/usr/bin/env node
/**
 * The `effect-agent-pipeline` command line (`npx effect-agent-pipeline
 * --help`). Commands: `viewer` — the execution viewer over an agent's
 * store, read-only (see `ViewerCommand.ts`).
 *
 * @since 0.1.0
 */
import { Command } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { createRequire } from "node:module"
import { viewer } from "./internal/ViewerCommand.js"

// This module sits two folders below the package root, as source and built.
const { version } = createRequire(import.meta.url)("../../package.json") as { readonly version: string }

const cli = Command.make("effect-agent-pipeline").pipe(
  Command.withDescription("Tools for agents built with effect-agent-pipeline"),
  Command.withSubcommands([viewer])
)

Command.run(cli, { name: "effect-agent-pipeline", version })(process.argv).pipe(
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain
)
