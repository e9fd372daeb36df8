from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.audit_page_entries_item import AuditPageEntriesItem


T = TypeVar("T", bound="AuditPage")


@_attrs_define
class AuditPage:
    """A page of the audit trail.

    Attributes:
        entries (list[AuditPageEntriesItem]):
        next_ (int): The cursor to ask from next; equal to `after` when there is nothing newer.
    """

    entries: list[AuditPageEntriesItem]
    next_: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        entries = []
        for entries_item_data in self.entries:
            entries_item = entries_item_data.to_dict()
            entries.append(entries_item)

        next_ = self.next_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "entries": entries,
                "next": next_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.audit_page_entries_item import AuditPageEntriesItem

        d = dict(src_dict)
        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = AuditPageEntriesItem.from_dict(entries_item_data)

            entries.append(entries_item)

        next_ = d.pop("next")

        audit_page = cls(
            entries=entries,
            next_=next_,
        )

        audit_page.additional_properties = d
        return audit_page

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
