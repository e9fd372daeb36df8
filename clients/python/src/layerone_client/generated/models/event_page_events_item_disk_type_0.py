from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.event_page_events_item_disk_type_0_filesystem import (
    EventPageEventsItemDiskType0Filesystem,
)

T = TypeVar("T", bound="EventPageEventsItemDiskType0")


@_attrs_define
class EventPageEventsItemDiskType0:
    """A file system found out of space by the runner (`disk_full`), or with space again
    (`disk_ok`): reported once per change, not on every pass.

        Attributes:
            available_bytes (int): The bytes an unprivileged writer could still use there when the runner looked.
            filesystem (EventPageEventsItemDiskType0Filesystem): One of the node's file systems, by the stable name of what
                it holds: never a path.

                - `state`: Root's `state.db` (and its journal), the pass bookkeeping.
                - `inbox`: The API's `inbox.db`: where admission writes.
                - `blobs`: Uploads (`blobs/in`) and what jobs produce (`blobs/out`).
    """

    available_bytes: int
    filesystem: EventPageEventsItemDiskType0Filesystem

    def to_dict(self) -> dict[str, Any]:
        available_bytes = self.available_bytes

        filesystem = self.filesystem.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "available_bytes": available_bytes,
                "filesystem": filesystem,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        available_bytes = d.pop("available_bytes")

        filesystem = EventPageEventsItemDiskType0Filesystem(d.pop("filesystem"))

        event_page_events_item_disk_type_0 = cls(
            available_bytes=available_bytes,
            filesystem=filesystem,
        )

        return event_page_events_item_disk_type_0
