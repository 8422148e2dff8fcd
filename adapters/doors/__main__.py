import sys

from adapters.doors.process import main

sys.exit(main())
