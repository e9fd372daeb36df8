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
from attrs import field as _attrs_field

T = TypeVar("T", bound="EventsLost")


@_attrs_define
class EventsLost:
    """The events feed no longer holds the events just after the cursor asked from: root keeps the newest events only and
    trimmed those. A job's end may be among them: read each job being waited for with `getJob`, then resume from `after`
    = `first_cursor` - 1.

        Attributes:
            code (Literal['events_lost']):
            field (str): `after`, the cursor behind the trim.
            first_cursor (int): The oldest event's cursor the feed still holds.
            message (str):
    """

    code: Literal["events_lost"]
    field: str
    first_cursor: int
    message: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        field = self.field

        first_cursor = self.first_cursor

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "field": field,
                "first_cursor": first_cursor,
                "message": message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        code = cast(Literal["events_lost"], d.pop("code"))
        if code != "events_lost":
            raise ValueError(f"code must match const 'events_lost', got '{code}'")

        field = d.pop("field")

        first_cursor = d.pop("first_cursor")

        message = d.pop("message")

        events_lost = cls(
            code=code,
            field=field,
            first_cursor=first_cursor,
            message=message,
        )

        events_lost.additional_properties = d
        return events_lost

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
