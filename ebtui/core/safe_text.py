"""Model output is untrusted: strip terminal control sequences before it reaches a terminal.

Rich markup is neutralised by the front ends (they render text as Text/Markdown, never as markup);
this module removes what no front end must ever pass to the terminal: ANSI CSI/OSC/DCS sequences
(colour, cursor moves, OSC 52 clipboard writes, hyperlinks), other C0/C1 controls and NUL bytes.
"""

from __future__ import annotations

import re

# ESC [ ... final byte  |  ESC ] ... (BEL | ESC \)  |  ESC P/X/^/_ ... ESC \  |  ESC + one char
_ESCAPES = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]            # CSI
  | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)? # OSC (terminated by BEL or ST, or cut off)
  | \x1b[PX^_][^\x1b]*(?:\x1b\\)?      # DCS, SOS, PM, APC
  | \x9b[0-?]*[ -/]*[@-~]              # 8-bit CSI
  | \x9d[^\x07\x9c]*(?:\x07|\x9c)?     # 8-bit OSC
  | \x1b[@-Z\\-_]?                     # other two-byte escapes, or a lone ESC
    """,
    re.VERBOSE,
)
# C0 controls except \t \n, plus DEL and C1 controls; \r is dropped (it can overwrite a line)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_control(text: str) -> str:
    """Remove terminal escape sequences and control characters; keep tabs and newlines."""
    if not text:
        return text
    text = text.replace("\r\n", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))
