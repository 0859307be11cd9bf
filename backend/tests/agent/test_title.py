from __future__ import annotations

from agent.helpers import make_agent, scripted, thread_config, user
from pronghorn.agent.middlewares.title import clean_title, local_title
from support.scripted import scripted_model


def test_local_title_cuts_on_a_word():
    assert local_title("short one", 60) == "short one"
    t = local_title("please write a very long report about the migration of pronghorns", 30)
    assert len(t) <= 30 and t.endswith("…") and " " in t
    assert clean_title('"Otter Report"\nextra', 60) == "Otter Report"


async def test_title_set_once_locally(tmp_path):
    model = scripted([{"text": "one"}, {"text": "two"}])
    graph = make_agent(tmp_path, model, title_max_chars=20)
    cfg = thread_config()
    out = await graph.ainvoke(user("tell me about pronghorn antelopes please"), cfg)
    assert out["title"] == "tell me about…"
    out = await graph.ainvoke(user("something else"), cfg)
    assert out["title"] == "tell me about…"


async def test_llm_title_is_not_streamed(tmp_path):
    model = scripted([{"text": "the answer"}])
    titler = scripted_model(script=[], fallback={"text": "Antelope Facts"})
    graph = make_agent(tmp_path, model, internal_model=titler)
    cfg = thread_config()
    chunks = [c async for c, _ in graph.astream(user("antelopes?"), cfg, stream_mode="messages")]
    assert any("answer" in str(c.content) for c in chunks)
    assert not any("Antelope" in str(c.content) for c in chunks)
    assert (await graph.aget_state(cfg)).values["title"] == "Antelope Facts"
    assert len(titler.requests) == 1
