"""How the app talks to any model, whatever the persona and its language: the text tool protocol for
models without native tool calls (providers/tools.py) and what it answers them, and the instruction and
repair round of a structured answer (providers/structured.py), and the connection check. The model reads
these in English. They are str.format templates: braces the model must see are doubled."""

from __future__ import annotations

# The text tool protocol, after the system prompt; one TOOL_LINE for each tool follows it.
TOOL_PROTOCOL = (
    "You can use tools. To call one, write exactly:\n"
    '<tool_call>{{"name": "TOOL_NAME", "arguments": {{...}}}}</tool_call>\n'
    "then stop and wait for the <tool_result>. When you need no tool, answer normally.\n"
    "Tools:"
)
TOOL_LINE = "- {name}: {description} Arguments (JSON schema): {schema}"

# What the model reads back, in a user turn, after its calls: each tool's output, and each call that
# could not be read.
TOOL_RESULT = '<tool_result name="{name}">{output}</tool_result>'
TOOL_CALL_ERROR = "<tool_result>error: {problem}</tool_result>"
# A tool's output when it could not run: the model reads it and may try again.
NO_SUCH_TOOL = "error: there is no tool named {name!r}; available: {available}"
TOOL_FAILED = "error: {error_type}: {error}"
# An MCP tool that did not run (nexus_ark/mcp_tools/offer.py): the model reads why, in words, and goes on.
TOOL_NEVER = "error: the person does not allow {tool}; do not call it again, answer without it"
TOOL_DECLINED = "error: the person declined to run {tool} this time; answer without it"
TOOL_NEEDS_PERSON = "error: {tool} needs the person's approval and they are not here now; go on without it"
TOOL_UNAVAILABLE = "error: {tool} is not available right now ({problem}); answer without it"
TOOL_REPORTED_ERROR = "error reported by the tool: {text}"
# Why a <tool_call> block could not be read.
BAD_TOOL_CALL = "tool call {block!r} is not valid: {problem}"
TOOL_CALL_SHAPE = 'expected {{"name": ..., "arguments": {{...}}}}'
ARGUMENTS_NOT_AN_OBJECT = "arguments must be a JSON object"

# A structured answer (providers/structured.py): the schema after the system prompt (constrained decoding
# keeps the form, this tells the model what the fields mean), and the repair round after an answer that
# was not valid.
JSON_INSTRUCTION = "Answer with one JSON object only, no prose, matching this JSON schema:\n{schema}"
ANSWER_CUT_OFF = "the answer was cut off by the token limit; answer more briefly"
JSON_REPAIR = "That JSON is not valid: {problem}. Reply with only the corrected object."

# The settings' "Test connection" (app/models.py): a few words from the model, any words.
MODEL_CHECK = "Say OK."
