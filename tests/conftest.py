"""Shared fixtures. No test may reach a real model: the SDK's defaults point at a closed port."""

from __future__ import annotations

import compileall
import gc
import os
import re
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from pathlib import Path
from typing import Any

# Bytecode is cached even where the environment says PYTHONDONTWRITEBYTECODE (this machine's
# does), before the imports below: pytest rewrites the asserts of every module of a package
# that is a pytest plugin (hypothesis, anyio) as well as of the tests, and without a cache each
# process rewrites them again (about 0.8 s of CPU). `make test` unsets the variable, so the
# plugins pytest loads before this file are cached too.
sys.dont_write_bytecode = False

import certifi  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402
from pytest_aiohttp import AiohttpServer  # noqa: E402

from tests import postgres  # noqa: E402
from tests.adapters.warm_cli import WarmCli  # noqa: E402
from tests.fakes.anthropic_api import FakeAnthropic  # noqa: E402
from tests.topology import console_topology, topology  # noqa: E402

__all__ = ["console_topology", "topology"]  # fixtures: the topologies of the public port

# A property test checks what is true of every input, not how fast one runs: hypothesis's
# per-example deadline (200 ms) failed a config property on a loaded machine. Speed is measured
# in bench/.
settings.register_profile("switchboard", deadline=None)
settings.load_profile("switchboard")

ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """Set up once in the main process, before any xdist worker starts (they inherit it)."""
    if hasattr(config, "workerinput"):
        return
    _temp_in_memory()
    _compile_the_project()
    _rewrite_the_tests(config)
    _trust_one_root(config)
    if config.getoption("numprocesses", None):  # what the workers share: started once
        folder = postgres.share_with_workers()
        config.add_cleanup(lambda: postgres.stop_shared(folder))
        if not os.environ.get("SWITCHBOARD_TEST_COLD_CLI"):
            WarmCli.share_with_workers()


def _temp_in_memory() -> None:
    """Every test's files (its SQLite database, its config, the PostgreSQL server's data) go
    in memory where /dev/shm has room: the suite writes and syncs ~350 MB in thousands of small
    files, and on disk that cost about 5% of its CPU (the kernel's block I/O, PostgreSQL's and
    SQLite's syncs). Files there are real files; a process the suite SIGKILLs leaves them as
    it would on disk. A TMPDIR set by the caller wins; a small or noexec /dev/shm (a
    container's 64 MB one) is left alone."""
    if "TMPDIR" in os.environ:
        return
    try:
        shm = os.statvfs("/dev/shm")
    except OSError:
        return
    if shm.f_bavail * shm.f_frsize < 4 * 2**30 or shm.f_flag & os.ST_NOEXEC:
        return
    if not os.access("/dev/shm", os.W_OK | os.X_OK):
        return
    os.environ["TMPDIR"] = "/dev/shm"  # the workers and every process they start inherit it
    tempfile.tempdir = None  # gettempdir() reads it again


def _compile_the_project() -> None:
    """Bytecode is cached even where the environment says PYTHONDONTWRITEBYTECODE (this
    machine's does): the suite starts about a hundred `switchboard` processes, each of which
    would otherwise compile the project again (0.4 s each). The pyc files are checked against
    their sources as usual."""
    for package in ("runtime", "bridge", "adapters", "config", "tests"):
        compileall.compile_dir(ROOT / package, quiet=1)


def _rewrite_the_tests(config: pytest.Config) -> None:
    """Each xdist worker imports every test module with its asserts rewritten, and on a fresh
    clone the six of them start at once and each rewrite all of them (2.4 s of CPU each): done
    here once, with pytest's own rewriter into the cache file it reads, the workers find them
    written."""
    from _pytest.assertion import rewrite

    state = config.stash.get(rewrite.assertstate_key, None)
    if state is None or config.getoption("assertmode") != "rewrite":
        return
    for source in (ROOT / "tests").rglob("*.py"):
        if not (source.name.startswith("test_") or source.name == "conftest.py"):
            continue
        pyc = rewrite.get_cache_dir(source) / (source.name[:-3] + rewrite.PYC_TAIL)
        if rewrite._read_pyc(source, pyc, state.trace) is None:
            pyc.parent.mkdir(exist_ok=True)
            source_key, code = rewrite._rewrite_test(source, config)
            rewrite._write_pyc(state, code, source_key, pyc)


def _trust_one_root(config: pytest.Config) -> None:
    """Every HTTP client the suite makes (hundreds: each App's Anthropic client, each bot's two
    python-telegram-bot clients, aiohttp's default context in each process) builds a TLS
    context from SSL_CERT_FILE, and OpenSSL 3 takes ~50 ms to load a full CA bundle. No test
    speaks TLS (every fake is plain HTTP on loopback), so the suite and the processes it starts
    trust a bundle of one public root instead; a stray request to the internet would fail
    verification all the same."""
    bundle = Path(certifi.where()).read_text()
    first = re.search(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\n", bundle, re.S)
    assert first is not None, f"no certificate in {certifi.where()}"
    folder = Path(tempfile.mkdtemp(prefix="sb-tls-"))
    (folder / "root.pem").write_text(first.group(0))
    os.environ["SSL_CERT_FILE"] = str(folder / "root.pem")
    os.environ.pop("SSL_CERT_DIR", None)
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))


@pytest.hookimpl(wrapper=True)
def pytest_collection() -> Generator[None, object, object]:
    """Collection imports every SDK (the Anthropic SDK alone defines ~1,500 pydantic models):
    no garbage collection walks that while it grows. Once it is done, what it built lives as
    long as the process, so it is frozen out of every later collection's walk (as `switchboard
    run` does after starting)."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.enable()
        gc.collect()
        gc.freeze()


@pytest.fixture(autouse=True)
def _no_real_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")


@pytest.fixture
async def anthropic_api(aiohttp_server: Callable[..., Awaitable[AiohttpServer]]) -> FakeAnthropic:
    fake = FakeAnthropic()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "switchboard.db"


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    """A SQLite file, for a test of SQLite's own mechanics (where `db_path` may be a URL)."""
    return tmp_path / "switchboard.db"


@pytest.fixture
async def cleanup() -> AsyncIterator[list[Any]]:
    """Things with an async close() to close at the end of the test."""
    items: list[Any] = []
    yield items
    for item in reversed(items):
        await item.close()
