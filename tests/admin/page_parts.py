"""Parts of a console page as an admin reads them: a table's row, a cell's text, the notice of
what the last action did."""

from __future__ import annotations

import re


def row(html: str, attribute: str, value: str) -> str:
    found = re.search(rf'<tr {attribute}="{value}"[^>]*>.*?</tr>', html, re.S)
    assert found is not None, f"no row {attribute}={value}"
    return found.group(0)


def cell(html: str, field: str) -> str:
    found = re.search(rf'data-field="{field}">(.*?)</td>', html, re.S)
    assert found is not None, f"no {field} cell"
    return re.sub(r"<[^>]+>", "", found.group(1))


def flash(html: str) -> str:
    found = re.search(r'<p class="flash" role="status">([^<]*)</p>', html)
    assert found is not None, "no notice of what the action did"
    return found.group(1).replace("&#39;", "'")
