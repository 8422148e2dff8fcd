"""How long, in one way of saying it everywhere a person reads one (chat, the terminal, the
console, the CLI): a budget's renewal, a wait, a turn's time, an age (issue 43: the console
said "in 4 days" where chat said "in 3 d 23 h" for the same renewal)."""

from __future__ import annotations


def duration(seconds: float) -> str:
    """Exact where a second counts, rounded to its smallest unit beyond: "45 s", "1 min 30 s",
    "10 min", "3 h 10 min", "3 d 23 h" (never "4 days" for 3 days and 23 hours)."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 120:
        return f"1 min {whole - 60} s" if whole > 60 else "1 min"
    minutes = round(whole / 60)
    if minutes < 60:
        return f"{minutes} min"
    if minutes < 48 * 60:
        hours, minutes = divmod(minutes, 60)
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(round(minutes / 60), 24)
    return f"{days} d {hours} h" if hours else f"{days} d"
