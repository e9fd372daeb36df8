from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ReadSudoEventsRequestCursorType0")


@_attrs_define
class ReadSudoEventsRequestCursorType0:
    """The `next_cursor` of the previous page; absent to start at the beginning of the log.

    Attributes:
        device (int):
        inode (int):
        offset (int):
    """

    device: int
    inode: int
    offset: int

    def to_dict(self) -> dict[str, Any]:
        device = self.device

        inode = self.inode

        offset = self.offset

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "device": device,
                "inode": inode,
                "offset": offset,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        device = d.pop("device")

        inode = d.pop("inode")

        offset = d.pop("offset")

        read_sudo_events_request_cursor_type_0 = cls(
            device=device,
            inode=inode,
            offset=offset,
        )

        return read_sudo_events_request_cursor_type_0
