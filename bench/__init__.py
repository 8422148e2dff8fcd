"""Runtime benchmarks: `make bench` (or `python -m bench`)."""
