"""The terminal as the line editor holds it, from its start to its end: raw (the keys are
the editor's: the terminal does not echo them, Ctrl-C is no signal, Enter no line end of its
own) and in bracketed-paste mode (a paste arrives marked: one message, its lines kept).

prompt_toolkit leaves both for a moment each time it prints above the prompt
(`run_in_terminal` returns the terminal to cooked mode and its renderer turns the paste mode
off) and between two prompts. What the operator typed in that moment was echoed beside the
line being typed (it showed twice), a Ctrl-C stopped the process, and a paste's lines went
as messages one by one: rare on an idle machine, common on a busy one, where that moment
lasts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TextIO, cast

from prompt_toolkit.input.vt100 import Vt100Input
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.utils import get_bell_environment_variable, get_term_environment_variable


class RawInput(Vt100Input):
    """Stays raw while a line prints above the prompt: what is typed meanwhile waits in the
    terminal, unechoed, and is read when the prompt is drawn again."""

    def cooked_mode(self) -> AbstractContextManager[None]:
        return self.raw_mode()


class PasteModeOutput(Vt100_Output):
    """Keeps bracketed paste on once a prompt turned it on, until `end_paste_mode`."""

    def disable_bracketed_paste(self) -> None:
        """Not while the editor runs (prompt_toolkit asks at every print and prompt's end)."""

    def end_paste_mode(self) -> None:
        super().disable_bracketed_paste()
        self.flush()


@contextmanager
def held(stdin: TextIO, out: TextIO) -> Iterator[tuple[RawInput, PasteModeOutput]]:
    """The editor's input and output (as prompt_toolkit's `create_input`, `create_output`
    make them for a terminal), the terminal held raw; as it was again at the end."""
    keys = RawInput(stdin)
    built = PasteModeOutput.from_pty(
        out,
        term=get_term_environment_variable(),
        default_color_depth=ColorDepth.from_env(),
        enable_bell=get_bell_environment_variable(),
    )
    output = cast(PasteModeOutput, built)  # `from_pty` builds an instance of its class
    with keys.raw_mode():
        try:
            yield keys, output
        finally:
            output.end_paste_mode()
