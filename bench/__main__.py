import asyncio

from bench.runtime_bench import main

asyncio.run(main())
