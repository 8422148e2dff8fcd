"""Which files reach the model: decided before the download from what the platform says, and
after it from the bytes, each refusal with its reason as the sender reads it."""

from __future__ import annotations

from bridge.attachments.policy import Checked, Skipped, check, plan
from bridge.types import FileKind, InboundFile
from config.schema import AttachmentsConfig
from runtime.transcript import AttachmentForm
from tests.files_samples import jpeg, pdf, png

CONFIG = AttachmentsConfig()


def doc(name: str | None, mime: str | None = None, size: int = 100) -> InboundFile:
    return InboundFile(f"id-{name}", FileKind.DOCUMENT, name=name, mime_type=mime, size=size)


def test_kinds_by_type_or_name() -> None:
    files = (
        doc("a.png", "image/png"),
        doc("scan", "image/webp"),
        doc("paper.PDF", "application/octet-stream"),
        doc("main.rs", "application/octet-stream"),
        doc("data.json", "application/json"),
        doc("Dockerfile", None),
    )
    planned = plan(files, CONFIG.model_copy(update={"max_files": 10}), None)
    assert [(w.name, w.form, w.media_type) for w in planned.wanted] == [
        ("a.png", AttachmentForm.IMAGE, "image/png"),
        ("scan", AttachmentForm.IMAGE, "image/webp"),
        ("paper.PDF", AttachmentForm.DOCUMENT, "application/pdf"),
        ("main.rs", AttachmentForm.TEXT, "text/plain"),
        ("data.json", AttachmentForm.TEXT, "text/plain"),
        ("Dockerfile", AttachmentForm.TEXT, "text/plain"),
    ]
    assert planned.skipped == []


def test_what_is_not_passed_on_and_why() -> None:
    voice = InboundFile("v", FileKind.VOICE, mime_type="audio/ogg", size=10)
    files = (
        voice,
        doc("backup.tar.gz", "application/gzip"),
        doc("big.pdf", "application/pdf", size=21 * 1024 * 1024),
        *(doc(f"{n}.txt", "text/plain") for n in range(6)),
    )
    planned = plan(files, CONFIG, None)
    assert len(planned.wanted) == 5
    assert [s.text() for s in planned.skipped] == [
        "a voice message (the agent can't read voice messages)",
        "backup.tar.gz (the agent reads images (JPEG, PNG, GIF, WebP), PDFs and text or code "
        "files, not application/gzip)",
        "big.pdf (21.0 MB, over the 20.0 MB limit for pdf files)",
        "5.txt (only 5 files per message are passed on)",
    ]


def test_a_kind_turned_off_and_the_platforms_own_download_limit() -> None:
    config = CONFIG.model_copy(update={"kinds": ["image", "text"], "max_pdf_bytes": 30 * 2**20})
    planned = plan((doc("a.pdf", "application/pdf"),), config, None)
    assert [s.why for s in planned.skipped] == ["pdf files are turned off in this workspace"]
    planned = plan((doc("b.pdf", "application/pdf", size=25 * 2**20),), CONFIG, 20 * 2**20)
    assert planned.skipped[0].why == "25.0 MB, over the 20.0 MB limit for pdf files"


def test_a_photo_falls_back_to_the_largest_size_that_fits() -> None:
    small = InboundFile("s", FileKind.PHOTO, size=10_000)
    middle = InboundFile("m", FileKind.PHOTO, size=100_000)
    large = InboundFile("l", FileKind.PHOTO, size=9_000_000, smaller=(middle, small))
    [wanted] = plan((large,), CONFIG, None).wanted
    assert wanted.file.file_id == "m" and wanted.name == "photo.jpg"


def test_the_bytes_decide_in_the_end() -> None:
    [as_png] = plan((doc("x.png", "image/png"),), CONFIG, None).wanted
    checked = check(as_png, jpeg(), CONFIG)
    assert isinstance(checked, Checked) and checked.media_type == "image/jpeg", "what it is"
    assert check(as_png, png(8001, 10), CONFIG) == Skipped(
        "x.png", "8001x10 pixels, over the 8000-pixel limit"
    )
    assert check(as_png, b"GIF? no", CONFIG) == Skipped("x.png", "it is not a readable image file")
    [paper] = plan((doc("p.pdf", "application/pdf"),), CONFIG, None).wanted
    assert isinstance(check(paper, pdf(100), CONFIG), Checked)
    assert check(paper, pdf(101), CONFIG) == Skipped("p.pdf", "101 pages, over the 100-page limit")
    [notes] = plan((doc("n.txt", "text/plain"),), CONFIG, None).wanted
    assert check(notes, b"\x00\x01binary", CONFIG) == Skipped("n.txt", "it is not UTF-8 text")
    assert check(notes, b"x" * (CONFIG.max_text_bytes + 1), CONFIG) == Skipped(
        "n.txt", "262,145 bytes, over the 262,144-byte limit for text files"
    )
