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

T = TypeVar("T", bound="ReadSudoEventsResultEntriesItemType1")


@_attrs_define
class ReadSudoEventsResultEntriesItemType1:
    """A line that is not a sudo event the node understands, returned rather than dropped.

    Attributes:
        kind (Literal['unparseable']):
        line (str): The line, sanitized and cut.
        reason (str):
    """

    kind: Literal["unparseable"]
    line: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        line = self.line

        reason = self.reason

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "kind": kind,
                "line": line,
                "reason": reason,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = cast(Literal["unparseable"], d.pop("kind"))
        if kind != "unparseable":
            raise ValueError(f"kind must match const 'unparseable', got '{kind}'")

        line = d.pop("line")

        reason = d.pop("reason")

        read_sudo_events_result_entries_item_type_1 = cls(
            kind=kind,
            line=line,
            reason=reason,
        )

        return read_sudo_events_result_entries_item_type_1
