from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.read_sudo_events_request_cursor_type_0 import (
        ReadSudoEventsRequestCursorType0,
    )


T = TypeVar("T", bound="ReadSudoEventsRequest")


@_attrs_define
class ReadSudoEventsRequest:
    """Read a page of sudo's own log.

    Attributes:
        id (str):
        cursor (None | ReadSudoEventsRequestCursorType0 | Unset): The `next_cursor` of the previous page; absent to
            start at the beginning of the log.
        limit (int | Unset): At most this many entries (at most 200; default 100). Default: 100.
    """

    id: str
    cursor: None | ReadSudoEventsRequestCursorType0 | Unset = UNSET
    limit: int | Unset = 100

    def to_dict(self) -> dict[str, Any]:
        from ..models.read_sudo_events_request_cursor_type_0 import (
            ReadSudoEventsRequestCursorType0,
        )

        id = self.id

        cursor: dict[str, Any] | None | Unset
        if isinstance(self.cursor, Unset):
            cursor = UNSET
        elif isinstance(self.cursor, ReadSudoEventsRequestCursorType0):
            cursor = self.cursor.to_dict()
        else:
            cursor = self.cursor

        limit = self.limit

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
            }
        )
        if cursor is not UNSET:
            field_dict["cursor"] = cursor
        if limit is not UNSET:
            field_dict["limit"] = limit

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.read_sudo_events_request_cursor_type_0 import (
            ReadSudoEventsRequestCursorType0,
        )

        d = dict(src_dict)
        id = d.pop("id")

        def _parse_cursor(
            data: object,
        ) -> None | ReadSudoEventsRequestCursorType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                cursor_type_0 = ReadSudoEventsRequestCursorType0.from_dict(data)

                return cursor_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ReadSudoEventsRequestCursorType0 | Unset, data)

        cursor = _parse_cursor(d.pop("cursor", UNSET))

        limit = d.pop("limit", UNSET)

        read_sudo_events_request = cls(
            id=id,
            cursor=cursor,
            limit=limit,
        )

        return read_sudo_events_request
