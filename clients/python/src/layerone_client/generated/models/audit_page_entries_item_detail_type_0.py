from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="AuditPageEntriesItemDetailType0")


@_attrs_define
class AuditPageEntriesItemDetailType0:
    """A program the provider ran (or, on a Sim node, simulated).

    Attributes:
        args (list[str]): The argument list; secrets (password hashes) are `<redacted>`.
        backend (str): `real` or `sim`.
        kind (Literal['invocation']):
        ms (int): Wall time in milliseconds.
        path (str): The absolute path executed.
        program (str): The program's symbolic name (`useradd`, `visudo`...).
        error (None | str | Unset): The error code when there was no exit status.
        status (int | None | Unset): The exit status; absent when it timed out or could not start.
    """

    args: list[str]
    backend: str
    kind: Literal["invocation"]
    ms: int
    path: str
    program: str
    error: None | str | Unset = UNSET
    status: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        args = self.args

        backend = self.backend

        kind = self.kind

        ms = self.ms

        path = self.path

        program = self.program

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        status: int | None | Unset
        if isinstance(self.status, Unset):
            status = UNSET
        else:
            status = self.status

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "args": args,
                "backend": backend,
                "kind": kind,
                "ms": ms,
                "path": path,
                "program": program,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        args = cast(list[str], d.pop("args"))

        backend = d.pop("backend")

        kind = cast(Literal["invocation"], d.pop("kind"))
        if kind != "invocation":
            raise ValueError(f"kind must match const 'invocation', got '{kind}'")

        ms = d.pop("ms")

        path = d.pop("path")

        program = d.pop("program")

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_status(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        status = _parse_status(d.pop("status", UNSET))

        audit_page_entries_item_detail_type_0 = cls(
            args=args,
            backend=backend,
            kind=kind,
            ms=ms,
            path=path,
            program=program,
            error=error,
            status=status,
        )

        return audit_page_entries_item_detail_type_0
