"""The offline demo model plays real tool flows given tool results."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool

from pronghorn.models import make_demo_model


@tool
def write_file(description: str, path: str, content: str, append: bool = False) -> str:
    """Write a file."""
    return "OK"


@tool
def bash(description: str, command: str) -> str:
    """Run a command."""
    return ""


@tool
def present_files(filepaths: list[str]) -> str:
    """Show files to the user."""
    return ""


@tool
def ask_clarification(question: str, options: list[str] | None = None, context: Any = None) -> str:
    """Ask the user."""
    return ""


@tool
def write_todos(todos: list[dict]) -> str:
    """Write todos."""
    return ""


TOOLS = [write_file, bash, present_files, ask_clarification, write_todos]


async def turn(model, history: list[BaseMessage]) -> AIMessage:
    """One streamed model call, aggregated like an agent would."""
    chunks = [c async for c in model.bind_tools(TOOLS).astream(history)]
    out = chunks[0]
    for c in chunks[1:]:
        out = out + c
    assert out.usage_metadata and out.usage_metadata["total_tokens"] > 0
    return AIMessage(
        content=out.content,
        tool_calls=out.tool_calls,
        usage_metadata=out.usage_metadata,
        response_metadata=out.response_metadata,
    )


def result(msg: AIMessage, text: str) -> ToolMessage:
    call = msg.tool_calls[0]
    return ToolMessage(text, tool_call_id=call["id"], name=call["name"])


async def test_write_bash_present_answer_sequence():
    model = make_demo_model(chunk_delay_s=0)
    history: list[BaseMessage] = [HumanMessage("Please create a report about otters")]

    first = await turn(model, history)
    call = first.tool_calls[0]
    assert call["name"] == "write_file"
    path = call["args"]["path"]
    assert path.startswith("/mnt/user-data/outputs/") and "otters" in path
    assert "otters" in call["args"]["content"]
    history += [first, result(first, "OK")]

    second = await turn(model, history)
    assert second.tool_calls[0]["name"] == "bash"
    assert path in second.tool_calls[0]["args"]["command"]
    history += [second, result(second, f"412 {path}")]

    third = await turn(model, history)
    assert third.tool_calls[0]["name"] == "present_files"
    assert third.tool_calls[0]["args"] == {"filepaths": [path]}
    history += [third, result(third, "Presented 1 file")]

    final = await turn(model, history)
    assert not final.tool_calls
    assert path in final.content and "412" in final.content
    assert final.response_metadata["finish_reason"] == "stop"


async def test_write_flow_stops_on_a_tool_error():
    model = make_demo_model(chunk_delay_s=0)
    history: list[BaseMessage] = [HumanMessage("write a file called notes.txt")]
    first = await turn(model, history)
    assert first.tool_calls[0]["args"]["path"] == "/mnt/user-data/outputs/notes.txt"
    history += [first, result(first, "Error: permission denied")]
    final = await turn(model, history)
    assert not final.tool_calls and "permission denied" in final.content


async def test_clarification_uses_the_answer():
    model = make_demo_model(chunk_delay_s=0)
    history: list[BaseMessage] = [HumanMessage("ask me something")]
    ask = await turn(model, history)
    call = ask.tool_calls[0]
    assert call["name"] == "ask_clarification" and len(call["args"]["options"]) >= 2
    # Answer as a tool result (interrupt resumed with the answer)...
    answered = await turn(model, [*history, ask, result(ask, "A bullet list")])
    assert "A bullet list" in answered.content
    # ...or as the next human message.
    human = await turn(model, [*history, ask, result(ask, "asked"), HumanMessage("Short one")])
    assert "Short one" in human.content


async def test_plan_writes_todos_then_summarises():
    model = make_demo_model(chunk_delay_s=0)
    history: list[BaseMessage] = [HumanMessage("make a plan for a picnic")]
    plan = await turn(model, history)
    todos = plan.tool_calls[0]["args"]["todos"]
    assert plan.tool_calls[0]["name"] == "write_todos"
    assert {t["status"] for t in todos} <= {"pending", "in_progress", "completed"}
    final = await turn(model, [*history, plan, result(plan, "Updated todos")])
    assert todos[0]["content"] in final.content


async def test_greeting_and_echo_are_streamed_text():
    model = make_demo_model(chunk_delay_s=0)
    hello = [c async for c in model.astream([HumanMessage("Hello!")])]
    assert sum(1 for c in hello if c.content) > 5
    text = "".join(str(c.content) for c in hello)
    assert "offline demo model" in text
    echo = await turn(model, [HumanMessage("what is the capital of Peru")])
    assert "capital of Peru" in echo.content and not echo.tool_calls


async def test_without_tools_it_answers_in_text():
    model = make_demo_model(chunk_delay_s=0)
    msg = await model.ainvoke([HumanMessage("write a report about bees")])
    assert not msg.tool_calls and "write_file" in msg.content


async def test_demo_model_drives_a_real_create_agent_loop():
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    files: dict[str, str] = {}

    @tool("write_file")
    def write(description: str, path: str, content: str, append: bool = False) -> str:
        """Write a file."""
        files[path] = content
        return "OK"

    @tool("bash")
    def run(description: str, command: str) -> str:
        """Run a command."""
        path = command.split()[-1]
        return f"{len(files[path])} {path}"

    model = make_demo_model(chunk_delay_s=0)
    agent = create_agent(model, [write, run, present_files], checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t-demo"}}
    streamed = 0
    async for mode, _ in agent.astream(
        {"messages": [{"role": "user", "content": "write a report about otters"}]},
        config,
        stream_mode=["messages", "updates"],
    ):
        streamed += mode == "messages"
    messages = (await agent.aget_state(config)).values["messages"]
    names = [tc["name"] for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls]
    assert names == ["write_file", "bash", "present_files"]
    [path] = files
    assert path in messages[-1].content and str(len(files[path])) in messages[-1].content
    assert streamed > 20
    assert {r.thread_id for r in model.requests} == {"t-demo"}
