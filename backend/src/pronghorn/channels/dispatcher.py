"""What happens to one inbound message: dedupe, the access policy, `/connect`, commands,
the chat → thread mapping, inbound files, and starting the run the driver follows.

It goes through the runtime's services, the same the HTTP routes use: `ChannelState` (dedupe,
bindings, the chat's thread), `Uploads` (inbound files, with the upload limits and naming of
every other way in) and `Runs.start` (the run, with the defaults of every other way in), as
the bound user.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
from collections.abc import Callable, Mapping
from typing import cast

from pronghorn.auth import users as users_service
from pronghorn.auth.principal import Principal
from pronghorn.channels import approvals, commands, memory_text
from pronghorn.channels.driver import Turn, options_of
from pronghorn.channels.errors import PlatformError
from pronghorn.channels.files import with_real_extension
from pronghorn.channels.policy import access_of, decide
from pronghorn.channels.transport import Transport
from pronghorn.channels.types import ChannelCounts, Inbound, Target
from pronghorn.memory.records import MemoryScope
from pronghorn.models.errors import UnknownModelError
from pronghorn.runtime.access import Access, principal_from_record
from pronghorn.runtime.errors import DomainError
from pronghorn.runtime.services.channel_state import ChannelState
from pronghorn.runtime.services.runs import Message, Resume, Runs, RunStart
from pronghorn.runtime.services.uploads import Uploads
from pronghorn.runtime.wiring.app_runtime import AppRuntime
from pronghorn.sandbox.errors import SandboxError
from pronghorn.sandbox.paths import ThreadPaths

log = logging.getLogger("pronghorn.channels")

BIND_HINT = (
    "This bot only talks to connected accounts. Sign in to Pronghorn, ask for a connect "
    "code (Settings → Channels, or POST /api/channels/{name}/connect), then send "
    "/connect CODE here."
)
REFUSED = "Sorry, you are not allowed to use this bot."
QUEUED = "Queued: I will answer after the current request."
BAD_CODE = "That code is not valid or has expired. Ask for a new one."


def code_hash(code: str) -> str:
    return hashlib.sha256(code.strip().encode("utf-8")).hexdigest()


class Dispatcher:
    def __init__(
        self,
        *,
        runtime: AppRuntime,
        name: str,
        transport: Transport,
        counts: ChannelCounts,
        spawn: Callable[[Turn], None],
        active: Callable[[str], int],
    ) -> None:
        self.runtime = runtime
        self.state = ChannelState(runtime)
        self.uploads = Uploads(runtime)
        self.name = name
        self.t = transport
        self.counts = counts
        self._spawn = spawn
        self._active = active
        # Group chats: (chat, user) -> the conversation (topic) whose clarification question
        # waits for that user's answer. Their next message there answers it, mention or
        # not, in a thread or not. In memory: one replica's questions.
        self._questions: dict[tuple[str, str], str | None] = {}

    def question_asked(self, turn: Turn) -> None:
        """A turn ended asking `turn.origin`'s user a clarification question."""
        msg = turn.origin
        if msg is not None and msg.is_group:
            self._questions[(msg.chat_id, msg.user_id)] = msg.topic_id

    def _answering(self, msg: Inbound) -> Inbound:
        """`msg` as the answer to a question waiting for its sender in a group chat: in the
        question's conversation, as if addressed to the bot."""
        if not msg.is_group or msg.from_bot:
            return msg
        key = (msg.chat_id, msg.user_id)
        if key not in self._questions:
            return msg
        topic = self._questions.pop(key)
        return dataclasses.replace(msg, topic_id=topic, mentioned=True)

    async def handle(self, msg: Inbound) -> None:
        """Handle one message; a failure becomes a short reply, never silence."""
        msg = self._answering(msg)
        target = target_of(msg)
        try:
            await self._handle(msg, target)
        except PlatformError as exc:
            self.counts.errors += 1
            log.error("channel send failed", extra={"channel": self.name, "error": str(exc)})
        except Exception:
            self.counts.errors += 1
            log.exception("channel message failed", extra={"channel": self.name})
            await self._say_quietly(target, "Sorry, something went wrong. Please try again.")

    async def _say(self, target: Target, markdown: str) -> None:
        await self.t.send(target, self.t.render(markdown))

    async def _say_quietly(self, target: Target, markdown: str) -> None:
        with contextlib.suppress(PlatformError):
            await self._say(target, markdown)

    async def _handle(self, msg: Inbound, target: Target) -> None:
        cfg = self.runtime.config
        if msg.from_bot:
            return
        if not await self.state.first_delivery(
            self.name, msg.delivery_id, cfg.channels.dedupe_ttl_s
        ):
            self.counts.duplicates += 1
            return
        text = commands.strip_mentions(msg.text)
        cmd = commands.parse(text)
        if cmd is not None and cmd.name in ("connect", "start") and cmd.arg:
            await self._connect(msg, target, cmd.arg)
            return
        bound = await self._bound_principal(msg.user_id)
        decision = decide(
            access_of(cfg, self.name), msg, bound, channel=self.name, auth_mode=cfg.auth.mode
        )
        if decision.verdict == "ignore":
            return
        if decision.verdict in ("refuse", "bind"):
            self.counts.refused += 1
            await self._say(target, REFUSED if decision.verdict == "refuse" else self._hint())
            return
        principal = decision.principal
        assert principal is not None
        key = msg.chat_key + (f"|{principal.identity}" if msg.is_group else "")
        if cmd is not None and cmd.name == "memory":
            await self._memory(principal, target, guest=bound is None and cfg.auth.mode != "none")
            return
        if cmd is not None:
            await self._command(cmd, key, principal, target)
            return
        skill = await self._skill_call(text, principal)
        if skill is not None:
            name, task = skill
            if not task:
                await self._say(target, f"Usage: /{name} TASK (runs the task with that skill)")
                return
            text = f"/{name} {task}"  # how the web UI asks for a skill (the agent activates it)
        await self._chat(msg, text, key, principal, target)

    def _hint(self) -> str:
        return BIND_HINT.replace("{name}", self.name)

    # -- identity -------------------------------------------------------------------------------

    async def _connect(self, msg: Inbound, target: Target, code: str) -> None:
        binding = await self.state.redeem_code(
            code_hash=code_hash(code),
            channel=self.name,
            external_id=msg.user_id,
            external_name=msg.user_name,
        )
        if binding is None:
            await self._say(target, BAD_CODE)
            return
        who = str(binding.principal.get("display_name") or binding.owner_id)
        log.info(
            "channel identity bound",
            extra={"channel": self.name, "external_id": msg.user_id, "owner_id": binding.owner_id},
        )
        await self._say(target, f"Connected: you talk to the agent as {who}.")

    async def _bound_principal(self, external_id: str) -> Principal | None:
        binding = await self.state.binding_of(self.name, external_id)
        if binding is None:
            return None
        principal = principal_from_record(binding.principal, binding.owner_id)
        if self.runtime.config.auth.mode == "local" and principal.kind == "session":
            user = await users_service.get(self.runtime.db, binding.owner_id)
            if user is None or user.disabled:
                return None  # the user is gone or disabled: the binding no longer counts
            principal = Principal(
                identity=user.id,
                display_name=user.display_name or user.username,
                role=user.role,
                kind="session",
                username=user.username,
            )
        return principal

    # -- commands -------------------------------------------------------------------------------

    async def _command(
        self, cmd: commands.Command, key: str, principal: Principal, target: Target
    ) -> None:
        if cmd.name == "help" or cmd.name in ("start", "connect"):
            skills = await self.runtime.skills.for_run(principal.identity)
            await self._say(target, commands.help_text([(s.name, s.description) for s in skills]))
        elif cmd.name == "new":
            current = await self.state.chat_thread(self.name, key)
            model = current.model_name if current else None
            thread_id = await self.state.new_thread(self.name, key, principal, model)
            await self._say(target, f"New conversation started ({thread_id}).")
        elif cmd.name == "status":
            current = await self.state.chat_thread(self.name, key)
            if current is None:
                await self._say(target, "No conversation yet: send a message to start one.")
                return
            model = current.model_name or self.runtime.models.default_model_name()
            await self._say(target, f"Conversation {current.thread_id}\nModel: {model}")
        elif cmd.name == "models":
            names = [
                f"- {m['name']}" + (" (default)" if m["is_default"] else "")
                for m in self.runtime.models.list_models()
            ]
            await self._say(target, "Models:\n" + "\n".join(names))
        elif cmd.name == "model":
            await self._set_model(cmd.arg, key, principal, target)

    async def _memory(self, principal: Principal, target: Target, *, guest: bool) -> None:
        """The user's long-term memory; a chat account that is not bound has none to show."""
        if guest:
            await self._say(target, self._hint())
            return
        if not self.runtime.config.memory.enabled:
            await self._say(target, memory_text.OFF)
            return
        doc = await self.runtime.memory.document(MemoryScope(user_id=principal.identity))
        await self._say(target, memory_text.memory_text(doc))

    async def _skill_call(self, text: str, principal: Principal) -> tuple[str, str] | None:
        """`/name task` naming one of the user's enabled skills, else None (chat text)."""
        call = commands.skill_call(text)
        if call is None:
            return None
        skills = await self.runtime.skills.for_run(principal.identity)
        return call if any(s.name == call[0] for s in skills) else None

    async def _set_model(self, name: str, key: str, principal: Principal, target: Target) -> None:
        if not name:
            await self._say(target, "Usage: /model NAME (see /models)")
            return
        try:
            self.runtime.models.resolve(name)
        except UnknownModelError:
            await self._say(target, f"Unknown model {name!r}; see /models.")
            return
        if not await self.state.set_chat_model(self.name, key, name):
            await self.state.new_thread(self.name, key, principal, name)
        await self._say(target, f"This conversation now uses {name}.")

    # -- chat -----------------------------------------------------------------------------------

    async def _chat(
        self, msg: Inbound, text: str, key: str, principal: Principal, target: Target
    ) -> None:
        cfg = self.runtime.config
        section = getattr(cfg.channels, self.name)
        chat = await self.state.thread_for(self.name, key, principal)
        thread_id, model = chat.thread_id, chat.model_name
        # the thread's folders (the turn reads artifacts there); storing files is an update
        action = "update" if msg.files else "read"
        paths = await self.uploads.folders(Access(principal), thread_id, action)
        names = await self._receive_files(msg, paths)
        if names:
            listed = ", ".join(f"/mnt/user-data/uploads/{n}" for n in names)
            text = f"{text}\n\n(Files uploaded: {listed})".strip()
        if not text:
            return
        busy = self._active(thread_id) > 0 or chat.busy
        interrupts = _pending_interrupts(chat.interrupts) if not busy else []
        pending = approvals.requests_of(interrupts)
        turn: Message | Resume
        if pending:  # a tool approval asked in the chat: this message answers it
            answer = approvals.parse_answer(text)
            if answer is None:
                await self._say(target, approvals.HOW_TO_ANSWER)
                return
            turn = Resume(approvals.resume_value(pending, answer))
        elif interrupts:
            turn = Resume(_answer(text, options_of(interrupts)))
        else:
            turn = Message.of(text)
        run = RunStart(
            assistant_id=section.assistant_id,
            turn=turn,
            stream_mode=("messages-tuple", "values"),
            context={"model_name": model} if model else {},
            metadata={"channel": self.name},
        )
        try:
            job = await Runs(self.runtime).start(Access(principal), thread_id, run)
        except DomainError as exc:
            log.warning("channel run refused", extra={"channel": self.name, "error": str(exc)})
            await self._say(target, "Sorry, I cannot answer right now. Please try again later.")
            return
        if busy:
            await self._say(target, QUEUED)
        self._spawn(
            Turn(
                job=job,
                target=target,
                paths=paths,
                artifacts_before=chat.artifacts,
                max_file_bytes=cfg.channels.max_file_bytes,
                origin=msg,
            )
        )

    async def _receive_files(self, msg: Inbound, paths: ThreadPaths) -> list[str]:
        """Store the message's files in the thread's uploads, as a web upload would be (the
        same names, limits and Markdown copies); a file that cannot be stored is said in the
        chat with the reason when it is the user's to fix (a limit), the others are kept."""
        names: list[str] = []
        limit = self.runtime.config.channels.max_file_bytes
        for file in msg.files:
            try:
                data = await self.t.download(file, limit)
                name = with_real_extension(file.name, data)
                names.append((await self.uploads.store(paths, name, data)).name)
                self.counts.files_in += 1
            except DomainError as exc:  # a limit, a bad name: the user can act on it
                log.warning(
                    "inbound file refused",
                    extra={"channel": self.name, "file": file.name, "error": exc.message},
                )
                await self._say(target_of(msg), f"Could not receive {file.name}: {exc.message}")
            except (PlatformError, SandboxError, OSError) as exc:
                log.warning(
                    "inbound file not stored",
                    extra={"channel": self.name, "file": file.name, "error": str(exc)},
                )
                await self._say(target_of(msg), f"Could not receive {file.name}.")
        await self._convert_files(msg, paths, names)
        return names

    async def _convert_files(self, msg: Inbound, paths: ThreadPaths, names: list[str]) -> None:
        """Markdown copies of received documents (as for a web upload); a document that
        cannot be read is said in the chat, the file itself stays received."""
        for done in await self.uploads.convert(paths, names):
            if done.error is not None:
                log.warning(
                    "inbound document not converted",
                    extra={"channel": self.name, "file": done.source, "error": done.error},
                )
                await self._say(
                    target_of(msg),
                    f"Received {done.source}, but could not read it as a document: {done.error}.",
                )


def target_of(msg: Inbound) -> Target:
    return Target(msg.chat_id, msg.topic_id, msg.is_group, msg.reply_ref)


def _pending_interrupts(by_task: Mapping[str, object]) -> list[object]:
    out: list[object] = []
    for items in by_task.values():
        if isinstance(items, list):
            out.extend(cast(list[object], items))
    return out


def _answer(text: str, options: list[str]) -> str:
    """A clarification answer: "2" picks the second option, anything else is the answer."""
    choice = text.strip()
    if choice.isdigit() and 1 <= int(choice) <= len(options):
        return options[int(choice) - 1]
    return choice
