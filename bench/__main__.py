import asyncio

from bench import (
    delivery_bench,
    engines_bench,
    files_bench,
    leases_bench,
    load_bench,
    markdown_bench,
    memory_bench,
    provider_bench,
    replicas_bench,
    runtime_bench,
    schedules_bench,
    slack_bench,
    store_bench,
    stream_bench,
    submit_bench,
    telegram_bench,
    usage_bench,
)

asyncio.run(runtime_bench.main())
asyncio.run(submit_bench.main([]))
asyncio.run(telegram_bench.main())
asyncio.run(slack_bench.main())
asyncio.run(delivery_bench.main())
asyncio.run(stream_bench.main())
asyncio.run(provider_bench.main([]))
asyncio.run(files_bench.main())
markdown_bench.main()
asyncio.run(store_bench.main())
asyncio.run(engines_bench.main())
asyncio.run(replicas_bench.main([]))
asyncio.run(load_bench.main([]))
asyncio.run(schedules_bench.main([]))
asyncio.run(usage_bench.main([]))
asyncio.run(memory_bench.main([]))
asyncio.run(leases_bench.main([]))
