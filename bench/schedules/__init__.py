"""Helpers of `bench/schedules_bench.py`: the App with many schedules, and what it stored."""
