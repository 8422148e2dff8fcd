"""The chunks the reference split (`split_before`) gives for each case of the corpus, kept as
digests in `split_expected.json` so that `test_split_same` need not run the reference (it is
quadratic: some 12 s of CPU for the corpus) unless the split's chunks differ from them.

The file is written only from the reference, never from the split under test, so
regenerating it cannot hide a change in the split:

    python -m tests.bridge.split_expected

Regenerate it when the corpus, the cases or a platform's render (the measure) change."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from bridge import markdown as md
from tests.bridge.split_before import split as split_before
from tests.bridge.split_corpus import ANSWERS, Case, cases

FILE = Path(__file__).with_suffix(".json")
REGENERATE = "python -m tests.bridge.split_expected"


def digest(chunks: list[str]) -> str:
    return hashlib.sha256(json.dumps(chunks).encode()).hexdigest()


def reference(markdown: str, case: Case) -> list[str]:
    md.RECENT.clear()  # the reference parses everything itself
    return split_before(markdown, case.limit, case.measure)


def expected() -> dict[str, str]:
    digests: dict[str, str] = json.loads(FILE.read_text())
    return digests


def regenerate() -> None:
    digests = {
        case.key: digest(reference(ANSWERS[name], case)) for name in ANSWERS for case in cases(name)
    }
    FILE.write_text(json.dumps(digests, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    regenerate()
