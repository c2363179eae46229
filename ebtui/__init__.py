"""ebtui — an Ethics Bowl for language models, in the terminal."""

from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:  # the names below, typed for checkers; at run time __getattr__ imports them when used
    from ebtui.api import JudgeResult as JudgeResult
    from ebtui.api import ModelResult as ModelResult
    from ebtui.api import Report as Report
    from ebtui.api import Store as Store
    from ebtui.api import open_store as open_store

#: the Python API (ebtui.api), imported on first use so `import ebtui` stays light
_API = ("open_store", "Store", "Report", "ModelResult", "JudgeResult")


def __getattr__(name: str) -> object:
    if name in _API:
        from ebtui import api

        return getattr(api, name)
    raise AttributeError(f"module 'ebtui' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
