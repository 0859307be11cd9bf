"""The offline **demo** model: a :class:`ScriptedChatModel` whose rules use the agent's tools.

It lets ``make dev`` show a working agent with no API key. Each call looks at the last
human message and at the tool calls and results already made after it, then picks the next
step (so a multi-step flow survives restarts and concurrent threads):

* greeting / "help"                 → a short streamed answer: what this is, what to try
* "write a file" / "create a report" → ``write_file`` to /mnt/user-data/outputs/…, then
  ``bash`` (``wc -c`` of it), then ``present_files``, then a streamed summary
* "ask me" / "clarify"             → ``ask_clarification`` with options; the answer (a tool
  result or the next human message) is used in the final message
* "plan" / "todo"                  → ``write_todos``, then a summary of the plan
* "research" / "compare" / "in parallel", when the ``task`` tool is bound (ultra mode)
                                    → three ``task`` calls at once, then a summary of what
  the sub-agents returned; as a sub-agent it looks at the workspace with ``ls`` and
  answers with short notes
* anything else                     → an echo-style streamed answer

A tool the model was not given (not bound) is skipped or explained in text.
"""

from __future__ import annotations

import re
import shlex

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import ToolCall

from pronghorn.models.scripted import ScriptedChatModel, ScriptedRequest
from pronghorn.models.steps import StepSpec, last_human_index, message_text

DEMO_MODEL_NAME = "demo"
DEMO_DISPLAY_NAME = "Offline demo model"
OUTPUTS = "/mnt/user-data/outputs"

_GREETING = re.compile(
    r"^\W*(hi|hello|hey|hallo|hola|greetings|good (morning|afternoon|evening)|help)\b"
)
_ASK = re.compile(r"\b(ask me|clarif(y|ication)|ask a question)\b")
_PLAN = re.compile(r"\b(plan|todos?|to-do|checklist)\b")
_WRITE = re.compile(
    r"\b(write|create|make|generate|save|draft)\b.*\b(file|report|document|note|notes|summary|"
    r"markdown|essay|readme)\b|\breport\b"
)
_DELEGATE = re.compile(r"\b(research|investigate|compare|in parallel|sub-?agents?)\b")
_SUBAGENT = re.compile(r"^You are a (command-line )?sub-agent")  # subagents/specs.py prompts
_ASPECTS = ("background and history", "key facts today", "open questions")
_FILENAME = re.compile(r"\b([\w-]+\.(?:md|txt|csv|tsv|json|html|py|yaml|mmd|svg|png|pdf))\b")
_STOP_WORDS = (
    "a an the me please write create make generate save draft file report document note "
    "notes about on for of to with and in into some short small new quick called named summary"
)
_STOP = frozenset(_STOP_WORDS.split())

_TRY = (
    "Things to try:\n"
    '- "Write a report about otters" (writes a file, checks it with bash, presents it)\n'
    '- "Ask me a question" (asks you to pick an option)\n'
    '- "Make a plan for a picnic" (writes a todo list)\n'
    '- with Ultra on, "Research otters in parallel" (three sub-agents at once)\n'
    "- anything else, which I will echo back."
)


def _say(text: str, **extra: object) -> StepSpec:
    return {"text": text, **extra}


def _call(name: str, **args: object) -> StepSpec:
    return {"tool_calls": [{"name": name, "args": args}]}


def _topic(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return [w for w in words if w not in _STOP][:4]


def _filename(text: str) -> str:
    if m := _FILENAME.search(text):
        return m.group(1)
    topic = _topic(text)
    return f"{'-'.join(topic) or 'demo'}-report.md"


def _report(text: str) -> str:
    topic = " ".join(_topic(text)) or "your request"
    return (
        f"# Report: {topic}\n\n"
        f"Requested: {text.strip()}\n\n"
        "## Summary\n\n"
        "This file was written by Pronghorn's offline demo model. It shows the agent's tool "
        "loop (write_file, bash, present_files) working end to end with no API key.\n\n"
        "## Next steps\n\n"
        "- Configure a real model in config.yaml (see docs/models.md).\n"
        "- Ask the same question again and compare.\n"
    )


def _calls_after(messages: list[BaseMessage]) -> list[tuple[ToolCall, str | None]]:
    """Tool calls in ``messages`` with their results (None while not answered)."""
    results = {m.tool_call_id: message_text(m) for m in messages if isinstance(m, ToolMessage)}
    out: list[tuple[ToolCall, str | None]] = []
    for m in messages:
        if isinstance(m, AIMessage):
            out += [(tc, results.get(tc.get("id") or "")) for tc in m.tool_calls]
    return out


def _is_error(result: str) -> bool:
    return result.lstrip().lower().startswith(("error", "failed", "traceback"))


def _pending_clarification(messages: list[BaseMessage], h: int) -> bool:
    """Did the assistant ask for clarification right before human message ``h``?"""
    for m in reversed(messages[:h]):
        if isinstance(m, ToolMessage):
            continue
        if isinstance(m, AIMessage):
            return any(tc["name"] == "ask_clarification" for tc in m.tool_calls)
        return False
    return False


def _answered(answer: str) -> StepSpec:
    return _say(
        f"Thanks — you chose: {answer.strip()}.\n\n"
        "A real model would now tailor its work to that choice. "
        "I am the offline demo model, so this is where the scripted conversation ends."
    )


def _write_flow(req: ScriptedRequest, calls: list[tuple[ToolCall, str | None]]) -> StepSpec:
    tools = set(req.tool_names)
    done = {tc["name"]: (tc, res) for tc, res in calls}
    write, _ = done["write_file"]
    path = write["args"].get("path", f"{OUTPUTS}/demo-report.md")
    for name in ("write_file", "bash", "present_files"):
        if name in done and _is_error(done[name][1] or ""):
            return _say(f"The {name} step failed:\n\n{done[name][1]}\n\nI stopped there.")
    if "bash" not in done and "bash" in tools:
        return _call(
            "bash", description="Check the size of the file", command=f"wc -c {shlex.quote(path)}"
        )
    if "present_files" not in done and "present_files" in tools:
        return _call("present_files", filepaths=[path])
    check = (done.get("bash", (None, None))[1] or "").strip()
    size = f" The check said: `{check.splitlines()[0]}`." if check else ""
    return _say(
        f"Done. I wrote `{path}`, checked it with bash and shared it with you.{size}\n\n"
        "This was the offline demo model walking through a real tool loop."
    )


def _is_subagent(req: ScriptedRequest) -> bool:
    first = req.messages[0] if req.messages else None
    return isinstance(first, SystemMessage) and bool(_SUBAGENT.search(message_text(first)))


def _delegate(text: str) -> StepSpec:
    topic = " ".join(_topic(_DELEGATE.sub("", text.lower()))) or "the topic"
    calls = [
        {
            "name": "task",
            "args": {
                "description": f"{aspect.capitalize()} of {topic}",
                "prompt": f"Look into the {aspect} of {topic} and reply with short notes.",
                "subagent_type": "general-purpose",
            },
        }
        for aspect in _ASPECTS
    ]
    return {
        "text": "I will split this into three parts and run them in parallel.",
        "tool_calls": calls,
    }


def _delegated(calls: list[tuple[ToolCall, str | None]]) -> StepSpec:
    lines: list[str] = []
    for tc, result in calls:
        answer = (result or "").split("Result:\n", 1)[-1].strip().splitlines()
        lines.append(
            f"- **{tc['args'].get('description', 'task')}**: {answer[0] if answer else '—'}"
        )
    return _say("Here is what the sub-agents found:\n\n" + "\n".join(lines))


def _subagent_step(
    req: ScriptedRequest, text: str, calls: list[tuple[ToolCall, str | None]]
) -> StepSpec:
    if not calls and "ls" in req.tool_names:
        return _call(
            "ls", description="Look at the shared workspace", path="/mnt/user-data/workspace"
        )
    subject = text.strip().removeprefix("Look into the ").split(" and reply")[0]
    return _say(
        f"Notes on {subject}: the offline demo model has no knowledge, so this is a placeholder "
        "a real model would fill in.",
        latency_s=1.5,
    )


def _first_step(req: ScriptedRequest, text: str) -> StepSpec:
    low = text.lower()
    tools = set(req.tool_names)
    if "task" in tools and _DELEGATE.search(low):
        return _delegate(text)
    if _ASK.search(low):
        if "ask_clarification" not in tools:
            return _say("I would ask you a clarifying question, but that tool is not enabled.")
        return _call(
            "ask_clarification",
            question="Which format would you like the answer in?",
            options=["A short summary", "A detailed report", "A bullet list"],
            context="The offline demo model always asks this to show clarification.",
        )
    if _WRITE.search(low):
        if "write_file" not in tools:
            return _say("I would write a file, but the write_file tool is not enabled.")
        step = _call(
            "write_file",
            description="Write the requested report",
            path=f"{OUTPUTS}/{_filename(text)}",
            content=_report(text),
        )
        step["reasoning"] = "The user wants a file. Write it to outputs, check it, present it."
        return step
    if _PLAN.search(low):
        if "write_todos" not in tools:
            return _say("I would write a todo list, but the write_todos tool is not enabled.")
        topic = " ".join(_topic(re.sub(r"\b(plan|todos?|to-do|checklist)\b", "", low))) or "it"
        todos = [
            {"content": f"Gather what is needed for {topic}", "status": "in_progress"},
            {"content": f"Do the main work on {topic}", "status": "pending"},
            {"content": "Review the result and share it", "status": "pending"},
        ]
        return _call("write_todos", todos=todos)
    if _GREETING.search(low):
        return _say(
            "Hello! I am Pronghorn's offline demo model: no API key, no network, scripted "
            "answers that really use the agent's tools.\n\n" + _TRY
        )
    words = len(text.split())
    return _say(
        f"You said: “{text.strip()}” ({words} words).\n\n"
        "I am the offline demo model, so I cannot really answer that. Configure a real model "
        "in config.yaml to get real answers.\n\n" + _TRY
    )


def demo_responder(req: ScriptedRequest) -> StepSpec:
    """Pick the demo model's next step from the conversation so far."""
    messages = req.messages
    h = last_human_index(messages)
    if h < 0:
        return _say("Hello! Send me a message to start. " + _TRY)
    text = message_text(messages[h])
    after = messages[h + 1 :]
    calls = _calls_after(after)
    if _is_subagent(req):
        return _subagent_step(req, text, calls)
    if calls:
        first = calls[0][0]["name"]
        if first == "ask_clarification":
            answer = calls[0][1]
            return _answered(answer) if answer else _say("Waiting for your answer.")
        if first == "write_file":
            return _write_flow(req, calls)
        if first == "task":
            return _delegated([c for c in calls if c[0]["name"] == "task"])
        if first == "write_todos":
            todos = calls[0][0]["args"].get("todos", [])
            lines = "\n".join(f"{i}. {t.get('content', '')}" for i, t in enumerate(todos, 1))
            return _say(f"Here is the plan I wrote down:\n\n{lines}\n\nI will start with step 1.")
        return _say("Done.")
    if isinstance(messages[h], HumanMessage) and _pending_clarification(messages, h):
        return _answered(text)
    return _first_step(req, text)


def make_demo_model(
    *, name: str = DEMO_MODEL_NAME, chunk_delay_s: float = 0.02
) -> ScriptedChatModel:
    """The offline demo model; ``chunk_delay_s`` paces the streamed words (0 in tests)."""
    return ScriptedChatModel(model=name, responder=demo_responder, chunk_delay_s=chunk_delay_s)
