"""Round files read fast for the analysis columns: msgspec structs made from the records' pydantic models (the
same field names, types and defaults, the records' validators mirrored, the models' methods borrowed), so
`judgment_facts` reads a decoded file as it reads a `Round`. A file the structs refuse is read by pydantic
(`Round.model_validate_json`) as before: refusing is always safe, so the structs are strict (JSON types only,
no coercion; dates in one plain form) and a file is read fast only where pydantic would read the same values.
A model the maker cannot mirror (a validator, alias or type it does not know) turns the fast path off.
"""

from __future__ import annotations

import logging
import re
import types
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, cast, get_args, get_origin

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ebtui.core.records import Round

log = logging.getLogger("ebtui.core.analysis")


class Unsupported(TypeError):
    """A model the struct maker cannot mirror exactly."""


#: the validators the structs mirror, by (model, validator): anything else in a model turns the fast path off
MIRRORED = {("Scores", "_in_range"), ("Override", "_range"), ("Judgment", "_plain_review_copies")}
#: the dates the facts read (the others are only checked, as pydantic checks them)
READ_DATES = {("Round", "timestamp")}
#: a date pydantic reads to the same value as datetime.fromisoformat (a stricter subset of both)
_WHEN = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{3}|\.\d{6})?(?:Z|[+-]\d\d:\d\d)?")


def _when(value: str) -> datetime:
    if _WHEN.fullmatch(value) is None:
        raise ValueError(f"date {value!r} not in the plain form")
    return datetime.fromisoformat(value)


class _Maker:
    def __init__(self) -> None:
        import msgspec

        self.msgspec = msgspec
        self.structs: dict[type, type] = {}

    def type_of(self, ann: Any, where: str) -> Any:
        """The msgspec type of a pydantic annotation (datetime: decoded as str, parsed in __post_init__)."""
        from pydantic import BaseModel

        origin, args = get_origin(ann), get_args(ann)
        if ann in (str, int, float, bool, type(None)):
            return ann
        if ann is Any or ann is object:
            return Any
        if isinstance(ann, type) and issubclass(ann, Enum) and issubclass(ann, str):
            return ann
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            return self.struct(ann)
        if origin is Literal and all(isinstance(a, str) for a in args):
            return ann
        if origin in (Union, types.UnionType):
            return Union[tuple(self.type_of(a, where) for a in args)]  # noqa: UP007 (built from a tuple)
        if origin is list and len(args) == 1:
            return list[self.type_of(args[0], where)]  # type: ignore[misc]
        if origin is dict and len(args) == 2 and args[0] is str:
            return dict[str, self.type_of(args[1], where)]  # type: ignore[misc]
        if origin is tuple and args and Ellipsis not in args:
            return tuple.__class_getitem__(tuple(self.type_of(a, where) for a in args))
        raise Unsupported(f"{where}: {ann!r}")

    def struct(self, model: type[BaseModel]) -> type:
        if model in self.structs:
            return self.structs[model]
        from pydantic import BaseModel

        from ebtui.core.records import CRITERIA

        msgspec = self.msgspec
        deco = model.__pydantic_decorators__
        found = {(model.__name__, n) for n in (*deco.field_validators, *deco.model_validators)}
        if found - MIRRORED or deco.validators or deco.root_validators or deco.computed_fields:
            raise Unsupported(f"{model.__name__}: validators {sorted(found - MIRRORED)}")
        fields: list[tuple[str, Any, Any]] = []
        dates: list[str] = []
        for name, f in model.model_fields.items():
            where = f"{model.__name__}.{name}"
            if f.alias or f.validation_alias or (f.metadata and (model.__name__, name) != ("Override", "criterion")):
                raise Unsupported(f"{where}: alias or constraints")
            ann = f.annotation
            inner = [a for a in get_args(ann) if a is not type(None)]
            if ann is datetime or (get_origin(ann) in (Union, types.UnionType) and inner == [datetime]):
                if (model.__name__, name) in READ_DATES:  # a date the facts read: as pydantic reads it
                    dates.append(name)
                    typ: Any = str if ann is datetime else str | None
                else:  # a date only checked: msgspec's own reading (it refuses every form pydantic refuses)
                    typ = ann
            elif model.__name__ in ("Scores", "Override") and (name in CRITERIA or
                                                              (model.__name__, name) == ("Override", "value")):
                if ann != int | None:
                    raise Unsupported(f"{where}: {ann!r}")
                typ = Annotated[int, msgspec.Meta(ge=1, le=10)] | None
            else:
                typ = self.type_of(ann, where)
            if (model.__name__, name) == ("Judgment", "needs_review"):
                typ = bool | msgspec.UnsetType  # (whether it was given: the model validator's rule)
                fields.append((name, typ, msgspec.UNSET))
                continue
            if (model.__name__, name) == ("Judgment", "review_reasons"):
                typ = list[str] | msgspec.UnsetType
                fields.append((name, typ, msgspec.UNSET))
                continue
            if f.is_required():
                fields.append((name, typ, msgspec.NODEFAULT))
            elif f.default_factory is not None:
                fac = f.default_factory
                if fac in (list, dict):
                    fields.append((name, typ, msgspec.field(default_factory=fac)))
                elif isinstance(fac, type) and issubclass(fac, BaseModel):
                    fields.append((name, typ, msgspec.field(default_factory=self.struct(fac))))
                else:  # a default made afresh (a new id, the time now): a file without it goes to pydantic
                    fields.append((name, typ, msgspec.NODEFAULT))
            else:
                default = f.default
                if isinstance(default, (list, dict)) and default:
                    raise Unsupported(f"{where}: default {default!r}")
                fields.append((name, typ, default))
        namespace = {k: v for k, v in vars(model).items()
                     if isinstance(v, types.FunctionType) and not k.startswith("_")}
        namespace["__post_init__"] = _post_init(model.__name__, tuple(dates))
        cls: type = msgspec.defstruct(f"Fast{model.__name__}", fields, kw_only=True, namespace=namespace)
        self.structs[model] = cls
        return cls



def _post_init(model: str, dates: tuple[str, ...]) -> Any:
    """The struct's checks and the model validators' rules (a ValueError: msgspec refuses the file)."""
    from msgspec import UNSET

    from ebtui.core.records import CRITERIA

    def check(self: Any) -> None:
        for name in dates:
            v = getattr(self, name)
            if v is not None:
                setattr(self, name, _when(v))
        if model == "Override" and self.criterion not in CRITERIA:
            raise ValueError(f"unknown criterion {self.criterion!r}")
        if model == "Judgment":
            if self.review_items:
                if self.needs_review is UNSET:
                    self.needs_review = True
                if self.review_reasons is UNSET:
                    self.review_reasons = list(dict.fromkeys(i.message for i in self.review_items))
            if self.needs_review is UNSET:
                self.needs_review = False
            if self.review_reasons is UNSET:
                self.review_reasons = []

    return check


_DECODER: list[Any] = []


def _decoder() -> Any:
    """The Round decoder (None: msgspec missing, or a model the maker cannot mirror — pydantic reads all)."""
    if not _DECODER:
        try:
            import msgspec

            from ebtui.core.records import Round as RoundModel

            _DECODER.append(msgspec.json.Decoder(_Maker().struct(RoundModel)))
        except (ImportError, Unsupported) as exc:
            log.info("round files read by pydantic (%s)", exc)
            _DECODER.append(None)
    return _DECODER[0]


def read_round(data: bytes) -> Round:
    """A round file's bytes as a Round (or the struct that stands for it: same fields and methods); ValueError
    when pydantic cannot read it either."""
    from ebtui.core.records import Round as RoundModel

    dec = _decoder()
    if dec is not None:
        import msgspec

        try:
            data.decode("utf-8")  # (msgspec skips unknown fields unchecked; pydantic refuses bad UTF-8 anywhere)
            return cast("Round", dec.decode(data))
        except (msgspec.DecodeError, UnicodeDecodeError):
            pass  # (ValidationError is a DecodeError) pydantic decides
    return RoundModel.model_validate_json(data)
