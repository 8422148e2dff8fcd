"""An operator's message with files, as stored between the platform's ack and its prompt."""

from __future__ import annotations

from pydantic import BaseModel

from bridge.attachments.policy import Wanted
from bridge.types import FileKind, InboundFile, Route
from runtime.transcript import AttachmentForm


class HeldFile(BaseModel):
    """A file to download: the platform's description, and what the model should get."""

    file_id: str
    kind: FileKind
    name: str
    mime_type: str | None
    size: int | None
    url: str | None
    form: AttachmentForm
    media_type: str
    limit: int

    @classmethod
    def of(cls, wanted: Wanted) -> HeldFile:
        f = wanted.file
        return cls(
            file_id=f.file_id,
            kind=f.kind,
            name=wanted.name,
            mime_type=f.mime_type,
            size=f.size,
            url=f.url,
            form=wanted.form,
            media_type=wanted.media_type,
            limit=wanted.limit,
        )

    def wanted(self) -> Wanted:
        file = InboundFile(self.file_id, self.kind, self.name, self.mime_type, self.size, self.url)
        return Wanted(file, self.name, self.form, self.media_type, self.limit)


class Undescribed(BaseModel):
    """A file the platform is asked about after the ack (`FileSource.describe`)."""

    file_id: str
    kind: FileKind
    url: str | None

    def file(self) -> InboundFile:
        return InboundFile(self.file_id, self.kind, url=self.url)


class Addressee(BaseModel):
    """Whose session a held message goes to: a notification's (a reply to it), else the
    conversation's, where the DM or chat binding decides the agent."""

    session_id: str | None = None
    direct: bool = False
    correlation_id: str | None = None  # the notification answered


class HeldMessage(BaseModel):
    """Everything needed to submit the prompt later, in another process if need be."""

    id: str
    route: Route
    operator_id: str
    text: str
    message_ref: str | None
    dedupe_keys: list[str]  # as marked seen (prefixed), to record the message they became
    correlation_id: str
    files: list[HeldFile]
    undescribed: list[Undescribed] = []
    addressee: Addressee = Addressee()
