"""One door per task: what the CLI and the TUI ask of the core.

Each module handles one task (play a round, run a tournament, build a report, correct a judgment, …): it
takes typed input, returns typed output or an async iterator of events, and never prints. `context.py`
holds what every task needs (settings, models, store, a client factory, a clock).
"""
