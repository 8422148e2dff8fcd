"""`switchboard` with the toy registered: the one line a platform adds, then the CLI."""

import sys

from adapters.platforms import register
from adapters.server.cli import main
from tests.adapters.toy_platform.plugin import TOY_PLATFORM

register(TOY_PLATFORM)
sys.exit(main())
