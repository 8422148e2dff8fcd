"""Everything the decision about one chat message needs, read before it (DESIGN §3, Ingress):
who the sender is (by the file, or by pairing), whether its platform ids were handled before,
its conversation's session, the notification it answers, and only what its kind of verdict
can use (a stranger's pairing state or last refusal; an operator's thread, the approval an
/approve points at, a budget hold). `bridge/verdicts.py` decides from them without I/O."""

from __future__ import annotations

from dataclasses import dataclass, replace

from bridge.attachments.intake import FileIntake
from bridge.commands import Command, UnknownCommand, answers_approval, parse
from bridge.pairing import Pairing, PairingLook
from bridge.platform import PlatformProfile
from bridge.platforms import Platforms
from bridge.replies import Framing, Pointing
from bridge.sessions import Sessions
from bridge.spend.notices import held_now
from bridge.store.buttons import ButtonStore
from bridge.store.records import NotificationPost
from bridge.store.store import BridgeStore
from bridge.trust import Refused, Trusted, classify, sender_key, stranger
from bridge.types import Answer, InboundChat, Quoted
from config.current import CurrentConfig
from config.schema import AttachmentsConfig, WorkspaceConfig
from config.timing import zone
from runtime.engine import Runtime
from runtime.errors import UnknownSessionError


@dataclass(frozen=True, slots=True)
class Facts:
    """What `decide` needs of a message's surroundings (of a copy handled before, nothing
    more than that)."""

    duplicate: bool  # its platform ids were handled before
    now: float = 0.0
    session_id: str | None = None  # its conversation's (or thread's) session, if it has one
    notification: NotificationPost | None = None  # an operator's: the notification it answers
    notification_live: bool = False  # that notification's session still exists
    held_back: bool = False  # it waits for its files, or behind a message here that does
    keys: tuple[str, ...] = ()  # its platform ids, as marked seen
    attachments: AttachmentsConfig | None = None  # held back: which files are taken
    download_limit: int | None = None  # held back: the most its platform lets a bot fetch
    pairing: PairingLook | None = None  # a stranger's DM where their workspace pairs
    refusal_told_at: float | None = None  # a stranger: when they were last told they are one
    context: tuple[Quoted, ...] = ()  # an operator's prompt: what it quotes, its new thread
    command: Command | UnknownCommand | None = None  # an operator's command, parsed once
    decision: tuple[str, str] | None = None  # an /approve or /deny: what it points at
    held: Answer | None = None  # an operator's prompt: a budget holds its session's turn
    profile: PlatformProfile | None = None  # the platform's (None: no adapter for it runs)
    private: str | None = None  # a slash command (as invoked): answered to its sender alone

    def framing(self, workspace: WorkspaceConfig) -> Framing:
        return Framing(self.notification, tuple(self.context), workspace, self.profile)


def command_of(chat: InboundChat, private: str | None = None) -> Command | UnknownCommand | None:
    """The command a message is, if any; a slash command is one whatever it says."""
    command = parse(chat.text) if chat.text is not None else None
    if private is not None and command is None:
        return UnknownCommand(chat.text or "")
    return command


class Reader:
    def __init__(
        self,
        config: CurrentConfig,
        runtime: Runtime,
        store: BridgeStore,
        sessions: Sessions,
        platforms: Platforms,
        files: FileIntake | None,
        pairing: Pairing | None,
    ) -> None:
        self._config = config
        self._runtime = runtime
        self._store = store
        self._sessions = sessions
        self._platforms = platforms
        self._files = files
        self._pairing = pairing
        self._pointing = Pointing(store, sessions, platforms)
        self._buttons = ButtonStore(store.runtime_store)

    async def pressed(self, chat: InboundChat) -> InboundChat:
        """A press of a button under a command's answer, as the command that button stands
        for: read from the delivery the press names (the rendering it was pressed on, sent
        to this conversation), or for a button posted before presses named it, from the
        delivery recorded as posted on its message. Unknown here, its text stays None and
        `decide` says the button no longer works."""
        if chat.button is None or chat.replied_to is None:
            return chat
        if chat.button_of is not None:
            command = await self._buttons.command_of(chat, chat.button_of, chat.button)
        else:
            command = await self._buttons.command_at(chat.route, chat.replied_to, chat.button)
        return replace(chat, text=command)

    async def sender(self, chat: InboundChat) -> Trusted | Refused:
        """The sender's trust: an operator by the file, or by pairing."""
        profile = self._platforms.profile(chat.route.platform)
        sender = classify(self._config(), chat, profile)
        if self._pairing is None or profile is None or not stranger(sender):
            return sender
        assert isinstance(sender, Refused) and sender.workspace is not None
        paired = await self._pairing.operator(chat, sender.workspace, profile)
        if paired is None:
            return sender
        return classify(self._config(), chat, profile, also=(paired,))

    async def facts(
        self,
        chat: InboundChat,
        sender: Trusted | Refused,
        keys: list[str],
        private: str | None = None,
    ) -> Facts:
        now = self._runtime.clock.wall()
        profile = self._platforms.profile(chat.route.platform)
        command = command_of(chat, private)
        if private is not None:  # a slash command: nothing of the conversation is needed
            return Facts(False, now, profile=profile, command=command, private=private)
        if await self._store.seen(keys):
            return Facts(duplicate=True)
        facts = Facts(
            duplicate=False,
            now=now,
            session_id=self._sessions.session_of(chat.route),
            profile=profile,
            command=command,
            keys=tuple(keys),
        )
        if isinstance(sender, Refused):
            return await self._of_stranger(chat, sender, facts)
        return await self._of_operator(chat, sender, facts)

    async def _of_stranger(self, chat: InboundChat, sender: Refused, facts: Facts) -> Facts:
        workspace = sender.workspace
        if workspace is None:
            return facts
        if self._pairs(chat, sender, workspace):
            assert self._pairing is not None
            return replace(facts, pairing=await self._pairing.look(chat, workspace))
        told_at = await self._store.refusal_replied_at(sender_key(chat))
        return replace(facts, refusal_told_at=told_at)

    def _pairs(self, chat: InboundChat, sender: Refused, workspace: WorkspaceConfig) -> bool:
        """A DM from someone who is not an operator, where the workspace pairs: groups and
        channels never pair, and a press on one of the bot's buttons is no request to pair,
        wherever it is."""
        return (
            self._pairing is not None
            and workspace.pairing.enabled
            and chat.is_direct
            and not chat.pressed
            and stranger(sender)
        )

    async def _of_operator(self, chat: InboundChat, sender: Trusted, facts: Facts) -> Facts:
        """An operator's answer to a notification is for the bot wherever it is written."""
        notification = await self._pointing.notification(chat)
        live = notification is not None and self._knows(notification.session_id)
        held_back = self._files is not None and self._files.wants(chat)
        facts = replace(
            facts, notification=notification, notification_live=live, held_back=held_back
        )
        if held_back:
            assert self._files is not None  # it holds back only where the bridge takes files
            limit = self._files.download_limit(chat.route.platform)
            facts = replace(facts, attachments=self._files.config, download_limit=limit)
        if facts.command is not None:
            if answers_approval(facts.command):
                facts = replace(facts, decision=await self._pointing.decision(chat))
            return facts
        if not held_back and (chat.text is None or (notification is not None and not live)):
            return facts  # nothing for the agent: it is rejected
        context = await self._pointing.context(chat, notification)
        facts = replace(facts, context=tuple(context))
        session_id = notification.session_id if notification is not None else facts.session_id
        if session_id is None or held_back:
            return facts
        profile = self._platforms.profile(chat.route.platform)
        buttons = profile is None or profile.limits.buttons
        tz = zone(sender.workspace.timezone)
        held = await held_now(self._runtime, session_id, tz, buttons=buttons)
        return replace(facts, held=held)

    def _knows(self, session_id: str) -> bool:
        try:
            self._runtime.session(session_id)
        except UnknownSessionError:
            return False
        return True
