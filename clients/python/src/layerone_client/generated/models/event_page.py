from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_page_events_item import EventPageEventsItem


T = TypeVar("T", bound="EventPage")


@_attrs_define
class EventPage:
    """A page of the events feed.

    Attributes:
        events (list[EventPageEventsItem]):
        next_ (int): The cursor to ask from next; equal to `after` when nothing happened.
        truncated (bool | Unset): The page stopped before `limit` events because the next one would have passed the
            page's budget of result bytes ([`EVENTS_PAGE_RESULT_BYTES`]): more events are there
            already, from `next`. Default: False.
    """

    events: list[EventPageEventsItem]
    next_: int
    truncated: bool | Unset = False
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        events = []
        for events_item_data in self.events:
            events_item = events_item_data.to_dict()
            events.append(events_item)

        next_ = self.next_

        truncated = self.truncated

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "events": events,
                "next": next_,
            }
        )
        if truncated is not UNSET:
            field_dict["truncated"] = truncated

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.event_page_events_item import EventPageEventsItem

        d = dict(src_dict)
        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = EventPageEventsItem.from_dict(events_item_data)

            events.append(events_item)

        next_ = d.pop("next")

        truncated = d.pop("truncated", UNSET)

        event_page = cls(
            events=events,
            next_=next_,
            truncated=truncated,
        )

        event_page.additional_properties = d
        return event_page

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
