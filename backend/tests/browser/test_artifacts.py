"""The artifacts panel in a real browser: a hostile HTML artifact is isolated (sandboxed
frame + CSP), CSV shows as a table, and big text files load in bounded pieces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from browser.helpers import screenshot, send, thread_id, wait_idle
from support.live import LiveServer

pytestmark = pytest.mark.browser

MARK = "leak-probe-7f3a"
COOKIE = "secret-cookie-probe-91c2"
# Everything an artifact could try: read cookies and storage, reach into the parent, navigate
# the top window, call the API (a write, so the server would show it), load an image beacon.
HOSTILE = (
    "Write a file named hostile.html <script>const r={};"
    "try{r.cookie=String(document.cookie)}catch(e){r.cookie='error:'+e.name}"
    "try{r.storage=String(localStorage.length)}catch(e){r.storage='error:'+e.name}"
    "try{r.parent=String(parent.document.cookie)}catch(e){r.parent='error:'+e.name}"
    "try{top.location.href='/leaked';r.top='no error'}catch(e){r.top='error:'+e.name}"
    f"const i=new Image();i.src='/api/langgraph/threads?beacon={MARK}';"
    "fetch('/api/langgraph/threads',{method:'POST',headers:{'content-type':'application/json'},"
    f"body:JSON.stringify({{metadata:{{leak:'{MARK}'}}}})}})"
    ".then(x=>'status:'+x.status,e=>'error:'+e.name)"
    ".then(f=>{r.fetch=f;parent.postMessage({hostile:r},'*')})</script>"
)
LISTEN = """() => {
  window.__hostile = null;
  window.addEventListener('message', (e) => {
    if (e.data && e.data.hostile) window.__hostile = e.data.hostile;
  });
}"""


def _thread_file(server: LiveServer, thread: str, name: str) -> Path:
    found = [p for p in server.workdir.rglob(name) if thread in str(p)]
    assert len(found) == 1, found
    return found[0]


def test_hostile_html_artifact_is_isolated(
    page: Any, context: Any, ui_server: LiveServer, request: pytest.FixtureRequest
) -> None:
    context.add_cookies([{"name": "probe", "value": COOKIE, "url": ui_server.url}])
    # What got an answer. A load the CSP refuses is still reported as a request (and then
    # as failed, net::ERR_BLOCKED_BY_CSP) whenever Chromium gets to it, so requests alone
    # would make this race the image beacon; nothing the frame asks may be answered.
    frame_answers: list[str] = []
    page.on(
        "response",
        lambda r: frame_answers.append(r.url) if r.frame != page.main_frame else None,
    )
    answered: list[str] = []
    page.on("response", lambda r: answered.append(r.url))
    page.evaluate(LISTEN)
    assert COOKIE in page.evaluate("document.cookie")  # the app's page can see it

    send(page, HOSTILE)
    wait_idle(page)
    thread = thread_id(page)
    frame = page.get_by_test_id("html-artifact")
    frame.wait_for()
    assert frame.get_attribute("sandbox") == "allow-scripts"
    srcdoc = frame.get_attribute("srcdoc") or ""
    assert srcdoc.startswith('<!doctype html><meta http-equiv="Content-Security-Policy"')
    assert "connect-src 'none'" in srcdoc

    page.wait_for_function("() => window.__hostile !== null", timeout=20_000)
    seen: dict[str, str] = page.evaluate("window.__hostile")
    # The page side: the artifact ran, but read nothing and reached nothing.
    assert COOKIE not in str(seen), seen
    assert seen["cookie"].startswith("error:") or seen["cookie"] == "", seen
    assert seen["storage"].startswith("error:"), seen
    assert seen["parent"].startswith("error:"), seen
    assert seen["fetch"].startswith("error:"), seen
    assert page.url.endswith(f"/t/{thread}")
    assert frame_answers == []
    assert not [u for u in answered if MARK in u or u.endswith("/leaked")]

    # The server side: no thread was created by it and no request carried the probe.
    r = httpx.post(f"{ui_server.api}/threads/search", json={"metadata": {"leak": MARK}}, timeout=10)
    assert r.status_code == 200 and r.json() == []
    assert MARK not in ui_server.logs()
    page.get_by_role("complementary", name="Artifacts").scroll_into_view_if_needed()
    screenshot(page, request)


def test_csv_table_and_big_text_in_pieces(
    page: Any, ui_server: LiveServer, request: pytest.FixtureRequest
) -> None:
    send(page, "Write a file named birds.csv")
    wait_idle(page)
    send(page, "Write a file named big-notes.txt")
    wait_idle(page)
    thread = thread_id(page)
    _thread_file(ui_server, thread, "birds.csv").write_text(
        'bird,note\nkestrel,"hovers, then drops"\nheron,"says ""kraak"""\n', encoding="utf-8"
    )
    line = "0123456789abcdefghijklmnopqrstuvwxyz-é\n"  # é: pieces may split a character
    big = line * 16_000  # ~640 KB: three pieces of 256 KB
    _thread_file(ui_server, thread, "big-notes.txt").write_text(big, encoding="utf-8")

    page.reload()
    page.get_by_role("button", name="Artifacts").click()
    panel = page.get_by_role("complementary", name="Artifacts")
    panel.get_by_role("button", name="birds.csv").click()
    table = panel.get_by_test_id("table-artifact")
    table.wait_for()
    assert table.locator("th").all_inner_texts() == ["bird", "note"]
    cells = table.locator("tbody tr").all()
    assert [c.locator("td").all_inner_texts() for c in cells] == [
        ["kestrel", "hovers, then drops"],
        ["heron", 'says "kraak"'],
    ]
    screenshot(page, request, "-table")

    panel.get_by_role("button", name="big-notes.txt").click()
    more = panel.get_by_test_id("artifact-more")
    more.wait_for()
    assert "256 KB" in more.inner_text() or "256.0 KB" in more.inner_text(), more.inner_text()
    screenshot(page, request, "-piece")
    for _ in range(2):
        more.get_by_role("button", name="Load more").click()
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=artifact-more] button[disabled]')"
        )
    more.wait_for(state="detached")
    code = panel.get_by_test_id("artifact-preview").locator("code").inner_text()
    assert code.count("-é") == 16_000
    assert "\ufffd" not in code
    screenshot(page, request)


# A one-page PDF (the smallest valid layout: catalog, pages, page, content) and a 1x1 PNG.
PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
    b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
)
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082"
)


def test_mermaid_pdf_and_image(
    page: Any, ui_server: LiveServer, request: pytest.FixtureRequest
) -> None:
    loaded: list[str] = []
    page.on("response", lambda r: loaded.append(r.url))
    for name in ("paper.pdf", "dot.png"):
        send(page, f"Write a file named {name}")
        wait_idle(page)
    # The diagram renderer is not loaded for the chat or for other previews.
    assert not [u for u in loaded if "mermaid" in u.lower()], loaded
    send(page, "Write a file named flow.mmd")
    wait_idle(page)
    thread = thread_id(page)
    _thread_file(ui_server, thread, "flow.mmd").write_text(
        "graph TD\n  Start[Kestrel hovers] --> Drop[Then drops]\n", encoding="utf-8"
    )
    _thread_file(ui_server, thread, "paper.pdf").write_bytes(PDF)
    _thread_file(ui_server, thread, "dot.png").write_bytes(PNG)

    page.reload()
    page.get_by_role("button", name="Artifacts").click()
    panel = page.get_by_role("complementary", name="Artifacts")
    panel.get_by_role("button", name="flow.mmd").click()
    diagram = panel.get_by_test_id("mermaid-artifact")
    diagram.wait_for(timeout=30_000)
    diagram.locator("svg").wait_for()
    assert "Kestrel hovers" in diagram.inner_text()
    assert [u for u in loaded if "mermaid" in u.lower()]  # loaded on demand
    screenshot(page, request, "-mermaid")

    panel.get_by_role("button", name="paper.pdf").click()
    pdf = panel.get_by_test_id("pdf-artifact")
    pdf.wait_for()
    assert pdf.get_attribute("src", timeout=5_000).endswith("/outputs/paper.pdf")

    panel.get_by_role("button", name="dot.png").click()
    image = panel.get_by_role("img", name="dot.png")
    image.wait_for()
    page.wait_for_function(
        "() => { const i = document.querySelector('img.artifact-image');"
        " return i && i.complete && i.naturalWidth === 1; }"
    )
    screenshot(page, request)
