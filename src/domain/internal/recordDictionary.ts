/**
 * The static dictionary of body format 2: texts that nearly every record
 * holds — the default prompt builder's instructions, which every model
 * call's prompt starts with — so a body refers to them by number instead of
 * carrying them (a prompt piece `-1 - i` is entry `i`).
 *
 * Frozen with the format: a body written with these entries must decode the
 * same forever, so an entry is never changed or removed. When the prompt
 * builder's texts change, the new texts are appended (and the body format
 * goes up, so that an older reader refuses what it cannot expand);
 * test/record/RecordDictionary.test.ts says when that is due.
 */

/** The default planning instructions (`PromptBuilder`), as of body format 2. */
const planningInstructions = `<instructions>
Plan the tool calls that answer the user request. Reply with one JSON object:
{"reasoning":"...","steps":[{"step_id":"s1","namespace":"...","agent":"...","capability":"...","parameters_json":"{\\"city\\":\\"Paris\\"}","depends_on":[],"implicit_deps":[],"metadata_json":null}],"terminal":true}
parameters_json is the text of one JSON object holding the tool's arguments ("{}" when it takes none).
Use only tools from the tools section. A parameter may reference another step's output as "{{steps.<step_id>.output}}";
a same-phase reference needs depends_on, a reference to an earlier phase's step needs implicit_deps.
Set "terminal": false only when you need to see these results before planning more steps.
</instructions>`

/** The default synthesis instructions (`PromptBuilder`), as of body format 2. */
const synthesisInstructions = `<instructions>
Answer the user request from the step results. Be concise; do not invent results.
</instructions>`

/** The entries, in their frozen order. */
export const dictionary: ReadonlyArray<string> = [planningInstructions, synthesisInstructions]
