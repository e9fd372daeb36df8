from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.read_sudo_events_result_entries_item_type_0 import (
        ReadSudoEventsResultEntriesItemType0,
    )
    from ..models.read_sudo_events_result_entries_item_type_1 import (
        ReadSudoEventsResultEntriesItemType1,
    )
    from ..models.read_sudo_events_result_next_cursor_type_0 import (
        ReadSudoEventsResultNextCursorType0,
    )


T = TypeVar("T", bound="ReadSudoEventsResult")


@_attrs_define
class ReadSudoEventsResult:
    """A page of sudo events.

    Attributes:
        entries (list[ReadSudoEventsResultEntriesItemType0 | ReadSudoEventsResultEntriesItemType1]):
        restarted (bool): True when the cursor named a file that is no longer the log (rotated) or an offset past
            its end (truncated): this page starts at the beginning of the current log.
        next_cursor (None | ReadSudoEventsResultNextCursorType0 | Unset): Pass it as `cursor` to read on; absent when
            the log does not exist yet.
    """

    entries: list[
        ReadSudoEventsResultEntriesItemType0 | ReadSudoEventsResultEntriesItemType1
    ]
    restarted: bool
    next_cursor: None | ReadSudoEventsResultNextCursorType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.read_sudo_events_result_entries_item_type_0 import (
            ReadSudoEventsResultEntriesItemType0,
        )
        from ..models.read_sudo_events_result_next_cursor_type_0 import (
            ReadSudoEventsResultNextCursorType0,
        )

        entries = []
        for entries_item_data in self.entries:
            entries_item: dict[str, Any]
            if isinstance(entries_item_data, ReadSudoEventsResultEntriesItemType0):
                entries_item = entries_item_data.to_dict()
            else:
                entries_item = entries_item_data.to_dict()

            entries.append(entries_item)

        restarted = self.restarted

        next_cursor: dict[str, Any] | None | Unset
        if isinstance(self.next_cursor, Unset):
            next_cursor = UNSET
        elif isinstance(self.next_cursor, ReadSudoEventsResultNextCursorType0):
            next_cursor = self.next_cursor.to_dict()
        else:
            next_cursor = self.next_cursor

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "entries": entries,
                "restarted": restarted,
            }
        )
        if next_cursor is not UNSET:
            field_dict["next_cursor"] = next_cursor

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.read_sudo_events_result_entries_item_type_0 import (
            ReadSudoEventsResultEntriesItemType0,
        )
        from ..models.read_sudo_events_result_entries_item_type_1 import (
            ReadSudoEventsResultEntriesItemType1,
        )
        from ..models.read_sudo_events_result_next_cursor_type_0 import (
            ReadSudoEventsResultNextCursorType0,
        )

        d = dict(src_dict)
        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:

            def _parse_entries_item(
                data: object,
            ) -> (
                ReadSudoEventsResultEntriesItemType0
                | ReadSudoEventsResultEntriesItemType1
            ):
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    entries_item_type_0 = (
                        ReadSudoEventsResultEntriesItemType0.from_dict(data)
                    )

                    return entries_item_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                entries_item_type_1 = ReadSudoEventsResultEntriesItemType1.from_dict(
                    data
                )

                return entries_item_type_1

            entries_item = _parse_entries_item(entries_item_data)

            entries.append(entries_item)

        restarted = d.pop("restarted")

        def _parse_next_cursor(
            data: object,
        ) -> None | ReadSudoEventsResultNextCursorType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                next_cursor_type_0 = ReadSudoEventsResultNextCursorType0.from_dict(data)

                return next_cursor_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ReadSudoEventsResultNextCursorType0 | Unset, data)

        next_cursor = _parse_next_cursor(d.pop("next_cursor", UNSET))

        read_sudo_events_result = cls(
            entries=entries,
            restarted=restarted,
            next_cursor=next_cursor,
        )

        return read_sudo_events_result
