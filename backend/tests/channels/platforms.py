"""One adapter per chat platform over its fake, so the channel conformance suite
(test_conformance.py) is written once and run against every platform: start a private
conversation, say something (or send a file) as the user, redeliver it, read what the bot
posted and edited, the files it sent, refuse the next send with the platform's rate limit,
and drop the receiver's connection."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any, ClassVar

from channels.kit import FAST
from fakes import dingtalk_server, discord_server, feishu_server, slack_server, wecom_server
from fakes import telegram_server as tg
from fakes.dingtalk_server import FakeDingTalk
from fakes.discord_server import FakeDiscord
from fakes.feishu_server import FakeFeishu
from fakes.platform_base import Call, PlatformServer
from fakes.slack_server import FakeSlack
from fakes.telegram_server import FakeTelegram
from fakes.wecom_server import FakeWeCom
from support.inproc import InProcessServer

_ids = itertools.count(1)


@dataclass(frozen=True)
class Chat:
    """A private conversation of one user with the bot."""

    user: str
    key: str  # the channel's chat key (threads' `metadata.chat`)
    where: str  # what the fake files the bot's messages under


class Platform:
    """What every platform's adapter offers the suite."""

    name: ClassVar[str]
    edits: ClassVar[bool] = True  # streams by editing one message
    groups: ClassVar[bool] = True  # has group chats (where `mention_only` applies)
    asks_wait: ClassVar[float | None] = 1.0  # the wait a rate limit asks for (None: none)
    fake: PlatformServer

    def section(self) -> dict[str, Any]:
        raise NotImplementedError

    def ready(self) -> None:
        """Wait until the receiver is up."""

    def chat(self, n: int | None = None) -> Chat:
        """A new private conversation (`n`: a fixed one, the same user every time)."""
        raise NotImplementedError

    def group(self, chat: Chat) -> Chat:
        """A new group chat the bot and the user of `chat` are in (`where`: the group)."""
        raise NotImplementedError

    def say_in_group(self, group: Chat, text: str, *, mention: bool) -> None:
        """`text` from the group's user in the group, mentioning the bot or not."""
        raise NotImplementedError

    def say(self, chat: Chat, text: str) -> object:
        """Deliver `text` from the chat's user; a handle to redeliver it by."""
        raise NotImplementedError

    def redeliver(self, handle: object) -> None:
        raise NotImplementedError

    def say_file(self, chat: Chat, name: str, data: bytes) -> None:
        raise NotImplementedError

    def texts(self, chat: Chat) -> list[str]:
        """Every text the bot posted or edited in the chat, oldest first."""
        raise NotImplementedError

    def post_calls(self, chat: Chat) -> list[Call]:
        """The fake's records of the text messages the bot posted (not edits), oldest first."""
        raise NotImplementedError

    def post_text(self, call: Call) -> str:
        raise NotImplementedError

    def posted(self, chat: Chat) -> list[str]:
        return [self.post_text(c) for c in self.post_calls(chat)]

    def files_out(self, chat: Chat) -> list[tuple[str, bytes]]:
        raise NotImplementedError

    def fits(self, text: str) -> bool:
        """Whether one message may carry `text`."""
        raise NotImplementedError

    def limit_next_post(self) -> str:
        """Refuse the next post with the platform's rate limit; the call name it is
        recorded under (refused)."""
        raise NotImplementedError

    edit_method: ClassVar[str | None] = None  # the fake's name for an edit (to refuse it)

    def limit_edits(self, n: int) -> None:
        """Refuse the next `n` edits with the platform's rate limit."""
        assert self.edit_method is not None
        self.fake.retry_after = 1
        self.fake.limited[self.edit_method] = n

    def drop(self) -> bool:
        """Drop the receiver's connection as the platform would; False when there is none
        (webhooks, long polling)."""
        return False

    def connections(self) -> int:
        return 0


class Telegram(Platform):
    name = "telegram"
    fake: FakeTelegram
    edit_method = "editMessageText"

    def __init__(self) -> None:
        self.fake = FakeTelegram()

    def section(self) -> dict[str, Any]:
        return {"bot_token": tg.TOKEN, "api_base_url": self.fake.url, "poll_timeout_s": 5, **FAST}

    def ready(self) -> None:
        self.fake.wait_for(lambda: self.fake.of("getUpdates"))

    def chat(self, n: int | None = None) -> Chat:
        user = str(70_000 + (n or next(_ids)))
        return Chat(user, user, user)

    def group(self, chat: Chat) -> Chat:
        where = str(-(1_000_000 + next(_ids)))
        return Chat(chat.user, where, where)

    def say_in_group(self, group: Chat, text: str, *, mention: bool) -> None:
        said = f"@{tg.BOT['username']} {text}" if mention else text
        self.fake.user_message(
            said, user_id=int(group.user), chat_id=int(group.where), chat_type="group"
        )

    def say(self, chat: Chat, text: str) -> object:
        return self.fake.user_message(text, user_id=int(chat.user))

    def redeliver(self, handle: object) -> None:
        assert isinstance(handle, dict)
        self.fake.redeliver(handle)

    def say_file(self, chat: Chat, name: str, data: bytes) -> None:
        self.fake.user_message("see the file", user_id=int(chat.user), document=(name, data))

    def _calls(self, chat: Chat, *methods: str) -> list[Call]:
        return [
            c
            for c in list(self.fake.calls)
            if c.method in methods and str(c.body.get("chat_id")) == chat.where
        ]

    def texts(self, chat: Chat) -> list[str]:
        return [str(c.body["text"]) for c in self._calls(chat, "sendMessage", "editMessageText")]

    def post_calls(self, chat: Chat) -> list[Call]:
        return self._calls(chat, "sendMessage")

    def post_text(self, call: Call) -> str:
        return str(call.body["text"])

    def files_out(self, chat: Chat) -> list[tuple[str, bytes]]:
        return [c.files["document"] for c in self._calls(chat, "sendDocument")]

    def fits(self, text: str) -> bool:
        return len(text) <= 4096

    def limit_next_post(self) -> str:
        self.fake.retry_after = 1
        self.fake.limited["sendMessage"] = 1
        return "sendMessage!429"

    def drop(self) -> bool:
        self.fake.fail_polls()  # the long poll fails: polling goes on after a backoff
        return True

    def connections(self) -> int:
        """Polls answered after a failed one."""
        calls = [c.method for c in self.fake.calls if c.method.startswith("getUpdates")]
        failed = [i for i, m in enumerate(calls) if m == "getUpdates!502"]
        return len(calls) - 1 - failed[-1] if failed else 0


class Slack(Platform):
    name = "slack"
    fake: FakeSlack
    edit_method = "chat.update"

    def __init__(self) -> None:
        self.fake = FakeSlack()
        self._ts = itertools.count(1)

    def section(self) -> dict[str, Any]:
        return {
            "mode": "socket",
            "bot_token": slack_server.BOT_TOKEN,
            "app_token": slack_server.APP_TOKEN,
            "api_base_url": f"{self.fake.url}/api",
            **FAST,
        }

    def ready(self) -> None:
        self.fake.wait_for(lambda: self.fake.open_sessions() >= 1)

    def chat(self, n: int | None = None) -> Chat:
        n = n or next(_ids)
        return Chat(f"U{n}", f"D{n}", f"D{n}")

    def group(self, chat: Chat) -> Chat:
        where = f"C{next(_ids)}"
        return Chat(chat.user, where, where)

    def say_in_group(self, group: Chat, text: str, *, mention: bool) -> None:
        event = self._event(group, text, channel_type="channel")
        if mention:  # Slack sends a mention as `app_mention`
            event.update(type="app_mention", text=f"<@{slack_server.BOT_USER}> {text}")
            del event["channel_type"]
        self.fake.socket_event(event)

    def _event(self, chat: Chat, text: str, **extra: Any) -> dict[str, Any]:
        return {
            "type": "message",
            "user": chat.user,
            "text": text,
            "channel": chat.where,
            "channel_type": "im",
            "ts": f"1764600000.{next(self._ts):06d}",
        } | extra

    def say(self, chat: Chat, text: str) -> object:
        return self.fake.socket_event(self._event(chat, text))

    def redeliver(self, handle: object) -> None:
        assert isinstance(handle, dict)
        self.fake.redeliver(handle)

    def say_file(self, chat: Chat, name: str, data: bytes) -> None:
        key = f"{next(_ids)}-{name}"
        self.fake.files[key] = data
        url = f"{self.fake.url}/files-pri/{key}"
        files = [{"id": "F1", "name": name, "size": len(data), "url_private_download": url}]
        self.fake.socket_event(self._event(chat, "see the file", files=files))

    def texts(self, chat: Chat) -> list[str]:
        return self.fake.texts(chat.where)

    def post_calls(self, chat: Chat) -> list[Call]:
        return [c for c in self.fake.of("chat.postMessage") if c.body.get("channel") == chat.where]

    def post_text(self, call: Call) -> str:
        return str(call.body["text"])

    def files_out(self, chat: Chat) -> list[tuple[str, bytes]]:
        out: list[tuple[str, bytes]] = []
        for done in self.fake.of("files.completeUploadExternal"):
            if done.body.get("channel_id") == chat.where:
                out += [self.fake.uploads[f["id"]] for f in done.body["files"]]
        return out

    def fits(self, text: str) -> bool:
        return len(text) <= 4000

    def limit_next_post(self) -> str:
        self.fake.retry_after = 1
        self.fake.limited["chat.postMessage"] = 1
        return "chat.postMessage!429"

    def drop(self) -> bool:
        self.fake.drop()
        return True

    def connections(self) -> int:
        return self.fake.open_sessions()


class Discord(Platform):
    name = "discord"
    fake: FakeDiscord
    asks_wait = 0.3

    def __init__(self) -> None:
        self.fake = FakeDiscord()

    def section(self) -> dict[str, Any]:
        return {"bot_token": discord_server.TOKEN, "api_base_url": self.fake.api_base, **FAST}

    def ready(self) -> None:
        self.fake.wait_for(self.fake.connected)

    def chat(self, n: int | None = None) -> Chat:
        user = str(80_000 + (n or next(_ids)))
        return Chat(user, f"dm-{user}", f"dm-{user}")

    def group(self, chat: Chat) -> Chat:
        where = str(850_000 + next(_ids))
        return Chat(chat.user, where, where)

    def say_in_group(self, group: Chat, text: str, *, mention: bool) -> None:
        self.fake.message(
            text,
            user_id=group.user,
            channel_id=group.where,
            guild_id=discord_server.GUILD,
            mention=mention,
        )

    def say(self, chat: Chat, text: str) -> object:
        return self.fake.message(text, user_id=chat.user)

    def redeliver(self, handle: object) -> None:
        assert isinstance(handle, dict)
        self.fake.dispatch("MESSAGE_CREATE", handle)

    def say_file(self, chat: Chat, name: str, data: bytes) -> None:
        self.fake.message("see the file", user_id=chat.user, attachment=(name, data))

    def _calls(self, chat: Chat, method: str) -> list[Call]:
        return [c for c in self.fake.of(method) if c.body.get("channel_id") == chat.where]

    def texts(self, chat: Chat) -> list[str]:
        return self.fake.texts(chat.where)

    def post_calls(self, chat: Chat) -> list[Call]:
        return [c for c in self._calls(chat, "createMessage") if not c.files]

    def post_text(self, call: Call) -> str:
        return str(call.body.get("content", ""))

    def files_out(self, chat: Chat) -> list[tuple[str, bytes]]:
        return [c.files["files[0]"] for c in self._calls(chat, "createMessage") if c.files]

    def fits(self, text: str) -> bool:
        return len(text) <= 2000

    def limit_next_post(self) -> str:
        self.fake.retry_after_s = 0.3
        with self.fake._cond:  # pyright: ignore[reportPrivateUsage]
            self.fake.rate_limit_next = 1
        return "429"

    def drop(self) -> bool:
        self.fake.drop()
        return True

    def connections(self) -> int:
        return len(self.fake.op_calls("IDENTIFY")) + len(self.fake.op_calls("RESUME"))


class Feishu(Platform):
    """Feishu / Lark over its long connection (the callbacks have suites of their own)."""

    name = "feishu"
    fake: FakeFeishu
    edit_method = "patch"

    def __init__(self) -> None:
        self.fake = FakeFeishu()

    def section(self) -> dict[str, Any]:
        return {
            "app_id": feishu_server.APP_ID,
            "app_secret": feishu_server.APP_SECRET,
            "receive": "long_connection",
            "api_base_url": self.fake.url,
            **FAST,
        }

    def ready(self) -> None:
        self.fake.wait_for(lambda: self.fake.of("ws_connect") and self.fake.of("bot_info"))

    def chat(self, n: int | None = None) -> Chat:
        n = n or next(_ids)
        return Chat(f"ou_c{n}", f"oc_c{n}", f"oc_c{n}")

    def group(self, chat: Chat) -> Chat:
        where = f"oc_g{next(_ids)}"
        return Chat(chat.user, where, where)

    def say_in_group(self, group: Chat, text: str, *, mention: bool) -> None:
        bot = {
            "key": "@_user_1",
            "id": {"open_id": feishu_server.BOT_OPEN_ID, "union_id": "on_bot", "user_id": ""},
            "name": "Pronghorn",
            "tenant_key": "tenant",
        }
        event = self.fake.message_event(
            chat_id=group.where,
            user=group.user,
            text=f"@_user_1 {text}" if mention else text,
            chat_type="group",
            mentions=[bot] if mention else None,
        )
        self.fake.push_event(event)

    def say(self, chat: Chat, text: str) -> object:
        event = self.fake.message_event(chat_id=chat.where, user=chat.user, text=text)
        self.fake.push_event(event)
        return event

    def redeliver(self, handle: object) -> None:
        assert isinstance(handle, dict)
        self.fake.push_event(handle)

    def say_file(self, chat: Chat, name: str, data: bytes) -> None:
        key = f"file_v3_{next(_ids)}"
        event = self.fake.message_event(
            chat_id=chat.where,
            user=chat.user,
            message_type="file",
            content={"file_key": key, "file_name": name},
        )
        self.fake.resources[(event["event"]["message"]["message_id"], key)] = data
        self.fake.push_event(event)

    def texts(self, chat: Chat) -> list[str]:
        return self.fake.texts(chat.where)

    def post_calls(self, chat: Chat) -> list[Call]:
        return [c for c in self.fake.sent(chat.where) if c.body.get("msg_type") == "interactive"]

    def post_text(self, call: Call) -> str:
        return feishu_server.card_markdown_of(str(call.body["content"]))

    def files_out(self, chat: Chat) -> list[tuple[str, bytes]]:
        out: list[tuple[str, bytes]] = []
        for c in self.fake.sent(chat.where):
            if c.body.get("msg_type") == "file":
                _, name, data = self.fake.uploads[json.loads(c.body["content"])["file_key"]]
                out.append((name, data))
        return out

    def fits(self, text: str) -> bool:
        return len(text) <= 6000

    def limit_next_post(self) -> str:
        self.fake.retry_after = 1
        self.fake.limited["send"] = 1
        return "send!429"

    def drop(self) -> bool:
        self.fake.drop_connection()
        return True

    def connections(self) -> int:
        return len(self.fake.of("ws_connect"))


class DingTalk(Platform):
    name = "dingtalk"
    fake: FakeDingTalk
    edit_method = "card_update"

    def __init__(self) -> None:
        self.fake = FakeDingTalk()

    def section(self) -> dict[str, Any]:
        return {
            "client_id": dingtalk_server.CLIENT_ID,
            "client_secret": dingtalk_server.CLIENT_SECRET,
            "api_base_url": self.fake.url,
            "oapi_base_url": self.fake.url,
            **FAST,
        }

    def ready(self) -> None:
        self.fake.wait_for(lambda: self.fake.of("ws_connect"))

    def chat(self, n: int | None = None) -> Chat:
        staff = f"staffc{n or next(_ids)}"
        return Chat(staff, f"cid-{staff}", f"single:{staff}")

    def group(self, chat: Chat) -> Chat:
        where = f"cidg{next(_ids)}"
        return Chat(chat.user, where, where)

    def say_in_group(self, group: Chat, text: str, *, mention: bool) -> None:
        self.fake.push(
            self.fake.message(
                conversation=group.where,
                staff=group.user,
                text=text,
                group=True,
                mentioned=mention,
            )
        )

    def say(self, chat: Chat, text: str) -> object:
        data = self.fake.message(conversation=chat.key, staff=chat.user, text=text)
        self.fake.push(data)
        return data

    def redeliver(self, handle: object) -> None:
        assert isinstance(handle, dict)
        self.fake.push(handle)

    def say_file(self, chat: Chat, name: str, data: bytes) -> None:
        code = f"dl-{next(_ids)}"
        self.fake.files[code] = data
        content = {"downloadCode": code, "fileName": name}
        msg = self.fake.message(
            conversation=chat.key, staff=chat.user, msgtype="file", content=content
        )
        self.fake.push(msg)

    def texts(self, chat: Chat) -> list[str]:
        return self.fake.texts(chat.where)

    def post_calls(self, chat: Chat) -> list[Call]:
        return [c for c in self.fake.sent(chat.where) if c.method == "card"]

    def post_text(self, call: Call) -> str:
        return str(call.body["markdown"])

    def files_out(self, chat: Chat) -> list[tuple[str, bytes]]:
        out: list[tuple[str, bytes]] = []
        for c in self.fake.sent(chat.where):
            if c.method == "robot" and c.body["msgKey"] == "sampleFile":
                _, name, data = self.fake.media[c.body["param"]["mediaId"]]
                out.append((name, data))
        return out

    def fits(self, text: str) -> bool:
        return len(text) <= 5000

    def limit_next_post(self) -> str:
        self.fake.retry_after = 1
        self.fake.limited["card"] = 1
        return "card!429"

    def drop(self) -> bool:
        self.fake.drop_connection()
        return True

    def connections(self) -> int:
        return len(self.fake.of("ws_connect"))


class WeCom(Platform):
    name = "wecom"
    fake: FakeWeCom
    edits = False  # app messages cannot be edited
    asks_wait = None  # errcode 45009 says no wait: retried with backoff
    groups = False  # an internal app's conversations are private (no group messages)

    def __init__(self) -> None:
        self.fake = FakeWeCom()
        self.gateway: InProcessServer | None = None  # set once it is up (callbacks go there)

    def section(self) -> dict[str, Any]:
        return {
            "corp_id": wecom_server.CORP_ID,
            "agent_id": wecom_server.AGENT_ID,
            "secret": wecom_server.SECRET,
            "token": wecom_server.TOKEN,
            "encoding_aes_key": wecom_server.AES_KEY,
            "api_base_url": self.fake.url,
            **FAST,
        }

    def chat(self, n: int | None = None) -> Chat:
        user = f"wuser{n or next(_ids)}"
        return Chat(user, user, user)

    def _post(self, xml: str) -> None:
        query, body = wecom_server.delivery(xml)
        assert self.gateway is not None
        with self.gateway.http() as http:
            response = http.post("/api/channels/wecom/callback", params=query, content=body)
        assert response.status_code == 200, response.text

    def say(self, chat: Chat, text: str) -> object:
        xml = self.fake.message_xml(user=chat.user, text=text)
        self._post(xml)
        return xml

    def redeliver(self, handle: object) -> None:
        assert isinstance(handle, str)
        self._post(handle)

    def say_file(self, chat: Chat, name: str, data: bytes) -> None:
        media = self.fake.add_media(data, "file")
        self._post(
            self.fake.message_xml(user=chat.user, msg_type="file", media_id=media, file_name=name)
        )

    def texts(self, chat: Chat) -> list[str]:
        return self.fake.texts(chat.where)

    def post_calls(self, chat: Chat) -> list[Call]:
        return [c for c in self.fake.sent(chat.where) if c.body["msgtype"] == "markdown"]

    def post_text(self, call: Call) -> str:
        return str(call.body["markdown"]["content"])

    def files_out(self, chat: Chat) -> list[tuple[str, bytes]]:
        out: list[tuple[str, bytes]] = []
        for c in self.fake.sent(chat.where):
            if c.body["msgtype"] == "file":
                _, name, data = self.fake.media[c.body["file"]["media_id"]]
                out.append((name, data))
        return out

    def fits(self, text: str) -> bool:
        return len(text.encode()) <= 2048

    def limit_next_post(self) -> str:
        self.fake.limited["send"] = 1
        return "send!429"


ALL: tuple[type[Platform], ...] = (Telegram, Slack, Discord, Feishu, DingTalk, WeCom)
