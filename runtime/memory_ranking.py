"""The one ranking of recalled memories, the same whichever database found the candidates:
a BM25 score over the query's terms (how often each occurs in a memory, against the memory's
length, weighted by how rare the term is among the candidates), scaled down a little for a
memory of text from elsewhere and up a little for a recent one: relevance comes first.

A term is a run of letters and digits, matched inside longer words too (as SQLite's trigram
index finds it); one shorter than three characters is no term, since a trigram index cannot
find it."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

MIN_TERM = 3  # characters: a trigram index finds nothing shorter
MAX_TERMS = 16
K1 = 1.2  # how fast a term's repeats stop counting
B = 0.75  # how much a long memory's length weighs against it
RECENCY_WEIGHT = 0.2  # a memory written just now scores up to this much more
HALF_LIFE_S = 30 * 86_400.0  # the recency bonus halves each month

_WORDS = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Doc:
    text: str
    created_at: float
    trust: float  # 1.0: the operator's or the agent's own; less for text from elsewhere


def terms_of(query: str) -> list[str]:
    """The query's distinct terms, lower case, in order, at most MAX_TERMS."""
    terms: list[str] = []
    for word in _WORDS.findall(query.lower()):
        if len(word) >= MIN_TERM and word not in terms:
            terms.append(word)
    return terms[:MAX_TERMS]


def scores(terms: Sequence[str], docs: Sequence[Doc], now: float) -> list[float]:
    """Each doc's score (0 for one that holds none of the terms), in the docs' order."""
    if not docs:
        return []
    texts = [d.text.lower() for d in docs]
    counts = [[text.count(term) for term in terms] for text in texts]
    average = sum(len(t) for t in texts) / len(texts) or 1.0
    rarity = []
    for i in range(len(terms)):
        holding = sum(1 for c in counts if c[i])
        rarity.append(math.log(1 + (len(docs) - holding + 0.5) / (holding + 0.5)))
    found = []
    for doc, text, c in zip(docs, texts, counts, strict=True):
        norm = K1 * (1 - B + B * len(text) / average)
        bm25 = sum(r * tf * (K1 + 1) / (tf + norm) for r, tf in zip(rarity, c, strict=True) if tf)
        if bm25 <= 0:
            found.append(0.0)
            continue
        recency = 0.5 ** (max(0.0, now - doc.created_at) / HALF_LIFE_S)
        found.append(bm25 * doc.trust * (1 + RECENCY_WEIGHT * recency))
    return found
