"""What the reload tests share: the config file edited in place, and an operator to add."""

from __future__ import annotations

from adapters.server.app import App

CAROL = '[[workspaces.operators]]\nid = "carol"\ntelegram_user_id = 3003\n\n'


def edit(app: App, old: str, new: str) -> None:
    assert app.path is not None
    source = app.path.read_text()
    assert old in source
    app.path.write_text(source.replace(old, new, 1))
