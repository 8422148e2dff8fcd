"""What spend sounds like in chat, the console and the CLI: amounts, budgets, notices."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bridge.approvals import duration
from bridge.spend.budgets import Standing
from config.budgets import BudgetConfig

PERIOD_WORDS = {"day": "daily", "month": "monthly"}

HELD = (
    "Paused before the next model call: {reason}.{until} {approve} lets this turn spend "
    "a little more past the limit; /stop ends it; an admin can raise the limit in the config "
    "and reload."
)
HELD_PRIMARY = (
    "{agent}'s turn{payer} is paused before its next model call: {reason}.{until} "
    "{approve} lets it spend a little more past the limit."
)
# What lets a held turn go on: its button, where the platform shows buttons; else the
# command itself (a terminal), naming the turn where it is not this conversation's own.
APPROVE_BUTTON = "Approve spend"
APPROVE_TYPED = "Typing /approve_spend{run}"
APPROVE_BOTH = "Approve spend (the button, or /approve_spend)"
DOING_HELD = "held by budget {budget}"  # what every status says of a turn a budget holds
HELD_NOW = (
    "Your message waits: {agent}'s turn here is held by {which} ({reason}).{until} "
    "{approve} lets it spend a little more past the limit; /stop ends it."
)
UNTIL = " The budget renews {when} (in {left})."
SCHEDULE_PAUSED = (
    "Schedule {id} is paused, its run stopped before the next model call: {reason}.{until} "
    "Resume it with /schedules resume {id} (it would stop again at the limit) or raise the "
    "limit in the config and reload."
)
WARNED = "{what} is {pct:.0%} spent: {used} of {limit}.{until}"
RELEASED_BY = "Going on: {by} approved the spend for this turn."
RELEASED = "Going on: the budget allows it again."
APPROVED = (
    "Approved: {agent}'s turn goes on past its budget, for one more step of it (this turn "
    "only); past that it waits again."
)
APPROVED_SPENT = "it has spent the {step} approved past {name} of {limit} ({used} spent so far)"
NOTHING_HELD = "No turn here is waiting on a budget."
NO_SUCH_HELD = "Turn {run_id} is not waiting on a budget (it may have gone on or ended)."


def approve(buttons: bool, run_id: str = "", *, both: bool = False) -> str:
    """How to let a held turn go on, where its notice shows: `buttons`, whether it shows
    the Approve spend button; `run_id`, the turn, when it is not the conversation's own;
    `both`: the button and the command are named."""
    if buttons:
        return APPROVE_BOTH if both else APPROVE_BUTTON
    return APPROVE_TYPED.format(run=f" {run_id}" if run_id else "")


def money(usd: float) -> str:
    """$20.00, $0.05, $0.0482: cents, or four places under a dollar when cents hide it."""
    if usd >= 1 or round(usd, 2) == round(usd, 4):
        return f"${usd:,.2f}"
    return f"${usd:.4f}"


def amount(budget: BudgetConfig, value: float) -> str:
    return money(value) if budget.limit_usd is not None else f"{int(value):,} tokens"


def budget_name(budget: BudgetConfig) -> str:
    """ "the workspace's daily budget", "agent ops's monthly budget"."""
    period = PERIOD_WORDS[budget.period]
    if budget.scope == "workspace":
        return f"the workspace's {period} budget"
    return f"{budget.scope} {budget.id}'s {period} budget"


def budget_title(budget: BudgetConfig) -> str:
    """The budget's name at the start of a line: "The workspace's daily budget"."""
    name = budget_name(budget)
    return name[0].upper() + name[1:]


def reason(s: Standing) -> str:
    """Why a call may not be made, for the operator: held on the call's estimate, a turn may
    stop while a little of the budget is left."""
    name, b = budget_name(s.budget), s.budget
    return f"it would pass {name} of {amount(b, s.limit)} ({amount(b, s.used)} spent so far)"


def approved_spent(s: Standing) -> str:
    """Why an approved turn is held again: its approval's step is spent."""
    b = s.budget
    return APPROVED_SPENT.format(
        step=amount(b, b.approve_step),
        name=budget_name(b),
        limit=amount(b, s.limit),
        used=amount(b, s.used),
    )


def until(end: float | None, tz: ZoneInfo, now: float) -> str:
    if end is None:
        return ""
    local = datetime.fromtimestamp(end, tz)
    when = f"at {local:%Y-%m-%d %H:%M} {tz.key}"
    return UNTIL.format(when=when, left=duration(max(0.0, end - now)))


def warned(s: Standing, tz: ZoneInfo, now: float) -> str:
    return WARNED.format(
        what=budget_title(s.budget),
        pct=s.share,
        used=amount(s.budget, s.used),
        limit=amount(s.budget, s.limit),
        until=until(s.end, tz, now),
    )
