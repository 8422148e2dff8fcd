"""A GitHub `workflow_run` delivery as GitHub sends it (the event's shape from GitHub's webhook
docs and octokit/webhooks' payload examples, `workflow_run/completed.payload.json`, with fewer
of its many URLs): a CI run on main that failed."""

from __future__ import annotations

import json
from typing import Any

REPO = "octo-org/octo-repo"
API = f"https://api.github.com/repos/{REPO}"
RUN_ID = 289782451


def _user(login: str, user_id: int, kind: str) -> dict[str, Any]:
    return {
        "login": login,
        "id": user_id,
        "node_id": "MDQ6VXNlcjE1NjY5OTE4",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{user_id}?v=4",
        "html_url": f"https://github.com/{login}",
        "url": f"https://api.github.com/users/{login}",
        "type": kind,
        "site_admin": False,
    }


def _repository() -> dict[str, Any]:
    return {
        "id": 300029405,
        "node_id": "MDEwOlJlcG9zaXRvcnkzMDAwMjk0MDU=",
        "name": "octo-repo",
        "full_name": REPO,
        "private": False,
        "owner": _user("octo-org", 41548062, "Organization"),
        "html_url": f"https://github.com/{REPO}",
        "description": "an effort to correct various shortcomings of the default event system",
        "fork": False,
        "url": API,
        "default_branch": "main",
    }


def workflow_run_failed() -> dict[str, Any]:
    """`X-GitHub-Event: workflow_run`, action `completed`, conclusion `failure`."""
    sha = "3484a3fb816e0859fd6e1cea078d76385ff50625"
    return {
        "action": "completed",
        "workflow_run": {
            "id": RUN_ID,
            "name": "CI",
            "node_id": "MDExOldvcmtmbG93UnVuMjg5NzgyNDUx",
            "head_branch": "main",
            "head_sha": sha,
            "path": ".github/workflows/ci.yml",
            "display_title": "build(test): check workflow run event payload",
            "run_number": 562,
            "event": "push",
            "status": "completed",
            "conclusion": "failure",
            "workflow_id": 2823525,
            "check_suite_id": 1291536064,
            "url": f"{API}/actions/runs/{RUN_ID}",
            "html_url": f"https://github.com/{REPO}/actions/runs/{RUN_ID}",
            "pull_requests": [],
            "created_at": "2020-10-05T16:33:24Z",
            "updated_at": "2020-10-05T16:35:01Z",
            "run_attempt": 1,
            "run_started_at": "2020-10-05T16:33:24Z",
            "jobs_url": f"{API}/actions/runs/{RUN_ID}/jobs",
            "logs_url": f"{API}/actions/runs/{RUN_ID}/logs",
            "head_commit": {
                "id": sha,
                "tree_id": "c30f6c3377009c4c91c85d1f15deb6f2b7c2eb37",
                "message": "build(test): check workflow run event payload",
                "timestamp": "2020-10-05T16:32:07Z",
                "author": {"name": "Matthias Fax", "email": "matfax@users.noreply.github.com"},
                "committer": {"name": "GitHub", "email": "noreply@github.com"},
            },
            "repository": _repository(),
            "head_repository": _repository(),
        },
        "workflow": {
            "id": 2823525,
            "node_id": "MDg6V29ya2Zsb3cyODIzNTI1",
            "name": "CI",
            "path": ".github/workflows/ci.yml",
            "state": "active",
            "created_at": "2020-10-02T12:42:30.000Z",
            "updated_at": "2020-10-03T19:24:48.000Z",
            "url": f"{API}/actions/workflows/2823525",
            "html_url": f"https://github.com/{REPO}/blob/main/.github/workflows/ci.yml",
            "badge_url": f"https://github.com/{REPO}/workflows/CI/badge.svg",
        },
        "repository": _repository(),
        "organization": {
            "login": "octo-org",
            "id": 41548062,
            "node_id": "MDEyOk9yZ2FuaXphdGlvbjQxNTQ4MDYy",
            "url": "https://api.github.com/orgs/octo-org",
            "description": "",
        },
        "sender": _user("Codertocat", 15669918, "User"),
    }


def body() -> bytes:
    """As GitHub sends it: JSON, UTF-8."""
    return json.dumps(workflow_run_failed(), indent=2).encode()
