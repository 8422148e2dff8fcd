"""Which of a message's files reach the model, decided twice: before any download from what
the platform says (kind, type, declared size, how many), and after it from the bytes (real
type, size, pixels, pages). Pure functions; every reason is a sentence from `texts.py`."""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from pathlib import PurePosixPath

from bridge import texts
from bridge.attachments import sniff
from bridge.types import FileKind, InboundFile
from config.schema import AttachmentsConfig
from runtime.transcript import AttachmentForm, human_size

MAX_IMAGE_SIDE = 8000  # the Anthropic API's limit, in pixels
IMAGE_TYPES = {"image/jpeg", "image/png", "image/gif", "image/webp"}
TEXT_TYPES = {
    "application/json",
    "application/ld+json",
    "application/xml",
    "application/yaml",
    "application/x-yaml",
    "application/toml",
    "application/javascript",
    "application/x-javascript",
    "application/typescript",
    "application/x-sh",
    "application/x-python",
    "application/sql",
    "application/x-ndjson",
    "application/csv",
}
TEXT_SUFFIXES = frozenset(
    [
        ".txt",
        ".md",
        ".markdown",
        ".rst",
        ".csv",
        ".tsv",
        ".log",
        ".json",
        ".jsonl",
        ".ndjson",
        ".yaml",
        ".yml",
        ".toml",
        ".ini",
        ".cfg",
        ".conf",
        ".env",
        ".xml",
        ".html",
        ".htm",
        ".css",
        ".scss",
        ".js",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".jsx",
        ".py",
        ".pyi",
        ".rb",
        ".go",
        ".rs",
        ".java",
        ".kt",
        ".kts",
        ".scala",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".swift",
        ".m",
        ".php",
        ".pl",
        ".lua",
        ".r",
        ".sql",
        ".sh",
        ".bash",
        ".zsh",
        ".fish",
        ".ps1",
        ".bat",
        ".dockerfile",
        ".tf",
        ".hcl",
        ".proto",
        ".graphql",
        ".gradle",
        ".diff",
        ".patch",
        ".tex",
        ".vue",
        ".svelte",
        ".dart",
        ".ex",
        ".exs",
        ".erl",
        ".hs",
        ".ml",
        ".clj",
        ".nim",
        ".zig",
        ".mk",
        ".cmake",
    ]
)
TEXT_NAMES = {"dockerfile", "makefile", "readme", "license", "gemfile", "procfile"}
KIND_WORDS = {
    FileKind.VOICE: "voice message",
    FileKind.AUDIO: "audio file",
    FileKind.VIDEO: "video",
    FileKind.VIDEO_NOTE: "video message",
    FileKind.ANIMATION: "animation",
    FileKind.STICKER: "sticker",
}
FORM_NAMES = {
    AttachmentForm.IMAGE: "image",
    AttachmentForm.DOCUMENT: "pdf",
    AttachmentForm.TEXT: "text",
}


@dataclass(frozen=True, slots=True)
class Wanted:
    """A file to download: which rendition, what it should be, and the most it may weigh."""

    file: InboundFile
    name: str
    form: AttachmentForm
    media_type: str
    limit: int


@dataclass(frozen=True, slots=True)
class Skipped:
    name: str
    why: str

    def text(self) -> str:
        return texts.FILE_SKIPPED.format(name=self.name, why=self.why)


@dataclass(frozen=True, slots=True)
class Checked:
    """A downloaded file that passed: what the model will be told it is."""

    name: str
    form: AttachmentForm
    media_type: str
    data: bytes


def name_of(file: InboundFile) -> str:
    if file.name:
        return file.name
    if file.kind is FileKind.PHOTO:
        return "photo.jpg"
    return f"a {KIND_WORDS.get(file.kind, 'file')}"


def classify(file: InboundFile) -> tuple[AttachmentForm, str] | str:
    """The form and media type the model would get the file in, or why it cannot."""
    if file.kind is FileKind.PHOTO:
        return AttachmentForm.IMAGE, "image/jpeg"
    if file.kind in KIND_WORDS:
        return texts.FILE_KIND_NOT_READ.format(kind=KIND_WORDS[file.kind])
    mime = (file.mime_type or "").split(";")[0].strip().lower()
    path = PurePosixPath((file.name or "").lower())
    guessed = mimetypes.guess_type(path.name)[0] or ""
    if mime in IMAGE_TYPES or (not mime.startswith("image/") and guessed in IMAGE_TYPES):
        return AttachmentForm.IMAGE, mime if mime in IMAGE_TYPES else guessed
    if mime == "application/pdf" or path.suffix == ".pdf":
        return AttachmentForm.DOCUMENT, "application/pdf"
    textual = mime.startswith("text/") or mime in TEXT_TYPES
    if textual or path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
        return AttachmentForm.TEXT, mime if mime.startswith("text/") else "text/plain"
    shown = mime or (path.suffix and f"{path.suffix} files") or "this kind of file"
    return texts.FILE_TYPE_NOT_READ.format(type=shown)


def too_large(size: int, limit: int, form: AttachmentForm) -> str:
    shown, most = human_size(size), human_size(limit)
    if shown == most:  # just over: rounding would show the same number twice
        shown, most = f"{size:,} bytes", f"{limit:,}-byte"
    return texts.FILE_TOO_LARGE.format(size=shown, limit=most, kind=FORM_NAMES[form])


def _limit(form: AttachmentForm, config: AttachmentsConfig) -> int:
    match form:
        case AttachmentForm.IMAGE:
            return config.max_image_bytes
        case AttachmentForm.DOCUMENT:
            return config.max_pdf_bytes
        case AttachmentForm.TEXT:
            return config.max_text_bytes


@dataclass(slots=True)
class Plan:
    wanted: list[Wanted]
    skipped: list[Skipped]
    # Files the platform named no type or name for (a Slack file shared from another
    # workspace): described by the platform after the ack, then planned alone.
    undescribed: list[InboundFile]


def described(file: InboundFile) -> bool:
    return file.kind is not FileKind.DOCUMENT or bool(file.name or file.mime_type)


def plan(
    files: tuple[InboundFile, ...], config: AttachmentsConfig, download_limit: int | None
) -> Plan:
    """Before any download: the files to fetch (at most `max_files`), and the rest with why.
    `download_limit` is the most the platform lets a bot download, if it has one."""
    wanted: list[Wanted] = []
    skipped: list[Skipped] = []
    undescribed: list[InboundFile] = []
    for file in files:
        name = name_of(file)
        if not described(file):
            if len(wanted) + len(undescribed) >= config.max_files:
                skipped.append(Skipped(name, texts.FILE_TOO_MANY.format(limit=config.max_files)))
            else:
                undescribed.append(file)
            continue
        found = classify(file)
        if isinstance(found, str):
            skipped.append(Skipped(name, found))
            continue
        form, media_type = found
        if FORM_NAMES[form] not in config.kinds:
            skipped.append(Skipped(name, texts.FILE_KIND_OFF.format(kind=FORM_NAMES[form])))
            continue
        limit = min(_limit(form, config), download_limit or _limit(form, config))
        fitting = [f for f in (file, *file.smaller) if f.size is None or f.size <= limit]
        if not fitting:
            size = min(f.size or 0 for f in (file, *file.smaller))
            skipped.append(Skipped(name, too_large(size, limit, form)))
            continue
        if len(wanted) + len(undescribed) >= config.max_files:
            skipped.append(Skipped(name, texts.FILE_TOO_MANY.format(limit=config.max_files)))
            continue
        wanted.append(Wanted(fitting[0], name, form, media_type, limit))
    return Plan(wanted, skipped, undescribed)


def check(wanted: Wanted, data: bytes, config: AttachmentsConfig) -> Checked | Skipped:
    """After the download: the file as the model will get it, or why it will not."""
    kind = FORM_NAMES[wanted.form]
    if len(data) > wanted.limit:
        return Skipped(wanted.name, too_large(len(data), wanted.limit, wanted.form))
    not_it = Skipped(wanted.name, texts.FILE_NOT_WHAT_IT_SAYS.format(kind=kind))
    match wanted.form:
        case AttachmentForm.IMAGE:
            real = sniff.image_type(data)
            if real is None:
                return not_it
            sides = sniff.image_size(data, real)
            if sides and max(sides) > MAX_IMAGE_SIDE:
                width, height = sides
                why = texts.FILE_TOO_WIDE.format(width=width, height=height, limit=MAX_IMAGE_SIDE)
                return Skipped(wanted.name, why)
            return Checked(wanted.name, wanted.form, real, data)
        case AttachmentForm.DOCUMENT:
            if not sniff.is_pdf(data):
                return not_it
            pages = sniff.pdf_pages(data)
            if pages > config.max_pdf_pages:
                why = texts.FILE_TOO_MANY_PAGES.format(pages=pages, limit=config.max_pdf_pages)
                return Skipped(wanted.name, why)
            return Checked(wanted.name, wanted.form, wanted.media_type, data)
        case AttachmentForm.TEXT:
            if sniff.utf8_text(data) is None:
                return Skipped(wanted.name, texts.FILE_UNREADABLE_TEXT)
            return Checked(wanted.name, wanted.form, wanted.media_type, data)
