"""A forgiving JSON reader for what judges write when they almost write JSON, and the search for every
JSON(-like) object in a reply."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeAlias

# --------------------------------------------------------------------------------------------------------
# JSON: strict, then a lenient reader for what judges write when they almost write JSON
# --------------------------------------------------------------------------------------------------------


class Obj(list[tuple[str, "Loose"]]):
    """A JSON object as its (key, value) pairs in order, duplicates kept (the last one given wins)."""


class Num(str):
    """A JSON number as written, so a score is never reformatted (1e1 stays "1e1")."""

    den: str | None = None


class Partial(str):
    """A string cut off by the end of the reply: kept as text, never read as a score."""


#: a JSON value as both readers give it: objects as Obj, numbers as Num (str), a cut-off string as Partial
Loose: TypeAlias = "Obj | list[Loose] | str | bool | None"


class _Fail(Exception):
    pass


class _Lenient:
    """A forgiving JSON reader: single quotes, trailing or missing commas, comments, Python literals,
    bare keys, raw line breaks in strings, "8/10" as a value, and a reply that ends mid-object (whatever
    was complete is returned; a number or key cut off at the end is dropped)."""

    MAX_DEPTH = 48
    _WS = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)
    _NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
    _DEN = re.compile(r"[ \t]*/[ \t]*(\d+)")
    _WORD = re.compile(r"[A-Za-z_$][\w$-]*")
    _CHUNK = {q: re.compile(rf"[^{re.escape(q)}\\]+") for q in ("\"", "'", "”")}
    _CLOSE = {"\"": "\"", "'": "'", "“": "”"}
    _ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\", "\"": "\"", "'": "'"}

    def __init__(self, text: str, pos: int) -> None:
        self.s = text
        self.i = pos
        self.n = len(text)
        self.truncated = False
        self.repairs: set[str] = set()

    def _ws(self) -> None:
        m = self._WS.match(self.s, self.i)
        if m and m.end() > self.i:
            if "/" in m.group(0):
                self.repairs.add("comments")
            self.i = m.end()

    def parse(self) -> Loose:
        return self._value(0)

    def _value(self, depth: int) -> Loose:
        self._ws()
        if self.i >= self.n:
            raise EOFError
        c = self.s[self.i]
        if c == "{":
            return self._object(depth + 1)
        if c == "[":
            return self._array(depth + 1)
        if c in self._CLOSE:
            return self._string()
        m = self._NUMBER.match(self.s, self.i)
        if m:
            if m.end() >= self.n or not self.s[m.end():].strip():
                raise EOFError  # "1" might have been "10" (a reply cut off after a number, a newline or two)
            self.i = m.end()
            num = Num(m.group(0))
            d = self._DEN.match(self.s, self.i)
            if d:
                if d.end() >= self.n or not self.s[d.end():].strip():
                    raise EOFError
                num.den = d.group(1)
                self.i = d.end()
                self.repairs.add('"N/10" values')
            return num
        m = self._WORD.match(self.s, self.i)
        if m:
            word = m.group(0)
            if m.end() >= self.n:
                raise EOFError
            self.i = m.end()
            lit = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
            if word in lit:
                if word[0].isupper():
                    self.repairs.add("Python literals")
                return lit[word]
            raise _Fail
        raise _Fail

    def _string(self) -> str:
        q = self.s[self.i]
        close = self._CLOSE[q]
        if q != "\"":
            self.repairs.add("single quotes" if q == "'" else "curly quotes")
        chunk = self._CHUNK[close]
        self.i += 1
        out: list[str] = []
        while True:
            m = chunk.match(self.s, self.i)
            if m:
                piece = m.group(0)
                if "\n" in piece:
                    self.repairs.add("line breaks inside strings")
                out.append(piece)
                self.i = m.end()
            if self.i >= self.n:
                self.truncated = True
                return Partial("".join(out))
            c = self.s[self.i]
            if c == "\\":
                if self.i + 1 >= self.n:
                    self.truncated = True
                    self.i = self.n
                    return Partial("".join(out))
                e = self.s[self.i + 1]
                if e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", self.s[self.i + 2 : self.i + 6]):
                    out.append(chr(int(self.s[self.i + 2 : self.i + 6], 16)))
                    self.i += 6
                else:
                    out.append(self._ESCAPES.get(e, e))
                    self.i += 2
                continue
            # a closing quote ends the string only where the string can end: before , : } ] or the end
            # (so "Team A's view" inside single quotes, or an unescaped "quote" inside double ones, survive)
            j = self.i + 1
            m = self._WS.match(self.s, j)
            k = m.end() if m else j
            if k >= self.n or self.s[k] in ",:}]" or (self.s[k] in "\"'" and "\n" in self.s[j:k]):
                self.i = j
                return "".join(out)
            out.append(c)
            self.i = j

    def _key(self) -> str:
        c = self.s[self.i]
        if c in self._CLOSE:
            return self._string()
        m = self._WORD.match(self.s, self.i)
        if not m:
            raise _Fail
        self.repairs.add("unquoted keys")
        self.i = m.end()
        return m.group(0)

    def _object(self, depth: int) -> Obj:
        obj = Obj()

        def member(depth: int) -> bool:
            key = self._key()
            if isinstance(key, Partial):
                return False
            self._ws()
            if self.i >= self.n:
                raise EOFError
            if self.s[self.i] not in ":=":
                raise _Fail
            self.i += 1
            obj.append((key, self._value(depth)))
            return True

        # a member that starts where a comma was missing: a key (quoted or bare)
        self._members(depth, "}", member, repeated_commas=True,
                      starts_member=lambda c: c in self._CLOSE or c.isalpha() or c == "_")
        return obj

    def _array(self, depth: int) -> list[Loose]:
        arr: list[Loose] = []

        def element(depth: int) -> bool:
            arr.append(self._value(depth))
            return True

        self._members(depth, "]", element, repeated_commas=False, starts_member=lambda c: True)
        return arr

    def _members(self, depth: int, close: str, read: Callable[[int], bool], *, repeated_commas: bool,
                 starts_member: Callable[[str], bool]) -> None:
        """Read an object's or array's members (the opening bracket is at self.i) up to `close`. `read`
        reads one member and keeps it (False: a cut-off key ends the container). A container the text ends
        in keeps what was complete (truncated); a value cut off by the end is dropped."""
        if depth > self.MAX_DEPTH:
            raise _Fail
        self.i += 1
        while True:
            self._ws()
            if self.i >= self.n:
                self.truncated = True
                return
            if self.s[self.i] == close:
                self.i += 1
                return
            try:
                if not read(depth):
                    return
            except EOFError:
                self.truncated = True
                self.i = self.n  # what was cut off is dropped
                return
            self._ws()
            if self.i >= self.n:
                self.truncated = True
                return
            c = self.s[self.i]
            if c == ",":
                self.i += 1
                self._ws()
                while repeated_commas and self.i < self.n and self.s[self.i] == ",":
                    self.repairs.add("repeated commas")
                    self.i += 1
                    self._ws()
                if self.i < self.n and self.s[self.i] == close:
                    self.repairs.add("trailing commas")
            elif c == close:
                self.i += 1
                return
            elif starts_member(c):
                self.repairs.add("missing commas")
            else:
                raise _Fail


@dataclass
class JsonCandidate:
    value: Loose
    strict: bool
    span: tuple[int, int]
    truncated: bool = False
    repairs: set[str] = field(default_factory=set)


_OBJ_START = re.compile(r"\{\s*(?:(?://[^\n]*|/\*.{0,400}?\*/)\s*){0,8}[\"'“\w]", re.DOTALL)
_DECODER = json.JSONDecoder(object_pairs_hook=Obj, parse_float=Num, parse_int=Num, parse_constant=Num)
_MAX_CANDIDATES = 64


def json_candidates(text: str) -> Iterator[JsonCandidate]:
    """Every JSON(-like) object in the reply, outermost only, in order. Work is bounded (a few passes
    over the text at most), whatever the text."""
    floor = 0
    tries = 0
    budget = 4 * len(text) + 100_000
    for m in _OBJ_START.finditer(text):
        start = m.start()
        if start < floor:
            continue
        tries += 1
        if tries > _MAX_CANDIDATES or budget <= 0:
            return
        try:
            value, end = _DECODER.raw_decode(text, start)
            budget -= end - start
            floor = end
            yield JsonCandidate(value, strict=True, span=(start, end))
            continue
        except (ValueError, RecursionError):
            pass
        reader = _Lenient(text, start)
        try:
            value = reader.parse()
        except (_Fail, EOFError, RecursionError):
            budget -= max(reader.i - start, 1)
            continue
        budget -= reader.i - start
        floor = reader.i
        yield JsonCandidate(value, strict=False, span=(start, reader.i), truncated=reader.truncated,
                             repairs=reader.repairs)

