"""Rendering, splitting, command parsing and the access policy, as plain functions."""

from __future__ import annotations

import pytest

from pronghorn.auth.principal import Principal
from pronghorn.channels.commands import parse, strip_mentions
from pronghorn.channels.files import with_real_extension
from pronghorn.channels.policy import decide
from pronghorn.channels.render import fit, slack_mrkdwn, split_text, telegram_html
from pronghorn.channels.types import Inbound
from pronghorn.config.schema.channels import ChannelAccess


def test_telegram_html_escapes_and_converts():
    out = telegram_html("# T\n**b** *i* `a<b` [x&y](https://e.x/?a=1&b=2)\n```\nif a<b:\n```")
    assert out == (
        '<b>T</b>\n<b>b</b> <i>i</i> <code>a&lt;b</code> <a href="https://e.x/?a=1&amp;b=2">'
        "x&amp;y</a>\n<pre>if a&lt;b:</pre>"
    )
    assert telegram_html("1 < 2 & <script>") == "1 &lt; 2 &amp; &lt;script&gt;"


def test_slack_mrkdwn():
    assert slack_mrkdwn("**b** *i* [l](https://e.x) <@U1>") == "*b* _i_ <https://e.x|l> &lt;@U1&gt;"


def test_split_prefers_boundaries_and_keeps_fences():
    text = "a" * 50 + "\n\n" + "b" * 50
    assert split_text(text, 60) == ["a" * 50, "b" * 50]
    fenced = "```\n" + "\n".join(["line"] * 40) + "\n```"
    pieces = split_text(fenced, 64)
    assert all(len(p) <= 64 for p in pieces) and all(p.count("```") == 2 for p in pieces)
    # escaping makes pieces grow: fit() still stays under the limit
    assert all(len(p) <= 100 for p in fit("<&>" * 200, 100, telegram_html))
    with pytest.raises(ValueError):
        split_text("x", 3)


def test_commands_and_mentions():
    assert strip_mentions("<@U123> /new") == "/new"
    assert strip_mentions("@bot, hello") == "hello"
    assert parse("/model   gpt") is not None and parse("/model gpt").arg == "gpt"  # type: ignore[union-attr]
    assert parse("/new@pronghorn_bot").name == "new"  # type: ignore[union-attr]
    assert parse("/unknown thing") is None and parse("hello /new") is None


def _msg(**kw: object) -> Inbound:
    base: dict[str, object] = {"delivery_id": "1", "chat_id": "c", "user_id": "u1", "text": "hi"}
    return Inbound(**{**base, **kw})  # type: ignore[arg-type]


def test_policy():
    bound = Principal(identity="alice", display_name="Alice")
    kw = {"channel": "telegram", "auth_mode": "local"}
    assert decide(ChannelAccess(), _msg(), None, **kw).verdict == "bind"
    assert decide(ChannelAccess(), _msg(), bound, **kw).principal == bound
    assert decide(ChannelAccess(), _msg(from_bot=True), bound, **kw).verdict == "ignore"
    assert decide(ChannelAccess(), _msg(is_group=True), bound, **kw).verdict == "ignore"
    assert (
        decide(ChannelAccess(), _msg(is_group=True, mentioned=True), bound, **kw).verdict == "allow"
    )
    allow = ChannelAccess(mode="allowlist", users=["u2", "bob"])
    assert decide(allow, _msg(), None, **kw).verdict == "refuse"
    guest = decide(allow, _msg(user_name="bob"), None, **kw)
    assert guest.verdict == "allow" and guest.principal is not None
    assert guest.principal.identity == "telegram:u1" and not guest.principal.is_admin
    opened = decide(ChannelAccess(mode="open"), _msg(), None, channel="t", auth_mode="none")
    assert opened.principal is not None and opened.principal.identity == "local"


def test_approval_question_masks_and_cuts_and_answers_parse():
    from pronghorn.channels import approvals

    (req,) = approvals.requests_of(
        [
            {
                "id": "i1",
                "value": {
                    "type": "tool_approval",
                    "tool": "bash",
                    "args": {
                        "command": "curl -H 'Authorization: Bearer abc.def' https://x `id`",
                        "api_key": "k-123",
                        "env": {"MY_TOKEN": "plain", "HOME": "/root"},
                        "long": "x" * 500,
                    },
                    "call_id": "c1",
                },
            },
            {"id": "i2", "value": {"question": "Which?"}},  # a clarification: not an approval
        ]
    )
    text = approvals.question([req])
    for secret in ("abc.def", "k-123", "plain"):
        assert secret not in text
    assert "Bearer ****" in text and '"HOME": "/root"' in text and "`id`" not in text
    assert "x" * 200 not in text and len(text) < 700
    assert approvals.parse_answer("Yes") == approvals.Answer(True)
    assert approvals.parse_answer("approve please") is None  # only a plain approve counts
    assert approvals.parse_answer("deny: too risky") == approvals.Answer(False, "too risky")
    assert approvals.parse_answer("no") == approvals.Answer(False, None)
    assert approvals.parse_answer("hmm") is None
    assert approvals.resume_value([req], approvals.Answer(False, "r")) == {
        "approved": False,
        "call_id": "c1",
        "reason": "r",
    }
    two = [req, approvals.ApprovalRequest("write_file", {}, "c2", "i9")]
    assert approvals.resume_value(two, approvals.Answer(True)) == {
        "i1": {"approved": True, "call_id": "c1"},
        "i9": {"approved": True, "call_id": "c2"},
    }
    assert "2 tool calls" in approvals.question(two)


def test_inbound_images_keep_their_real_extension():
    png, jpeg = b"\x89PNG\r\n\x1a\n....", b"\xff\xd8\xff\xe0...."
    gif, webp, bmp = b"GIF89a....", b"RIFF\x00\x00\x00\x00WEBPVP8 ", b"BM......"
    assert with_real_extension("image.png", jpeg) == "image.jpg"
    assert with_real_extension("image.jpg", png) == "image.png"
    assert with_real_extension("photo-7.jpg", webp) == "photo-7.webp"
    assert with_real_extension("image-2.png", gif) == "image-2.gif"
    assert with_real_extension("scan", bmp) == "scan.bmp"
    assert with_real_extension("holiday.JPEG", jpeg) == "holiday.JPEG"  # already right
    assert with_real_extension("image.png", b"not an image") == "image.png"
    assert with_real_extension("report.pdf", png) == "report.pdf"  # not an image name: kept
