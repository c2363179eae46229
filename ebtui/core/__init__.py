"""The ebtui core: records, loader, prompts, round engine, store, tournaments, analysis.

Never imports Textual or Rich: the TUI and the CLI are two front ends over this core.
"""
