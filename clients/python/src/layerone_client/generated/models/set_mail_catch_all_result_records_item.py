from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.set_mail_catch_all_result_records_item_type import (
    SetMailCatchAllResultRecordsItemType,
)

T = TypeVar("T", bound="SetMailCatchAllResultRecordsItem")


@_attrs_define
class SetMailCatchAllResultRecordsItem:
    """One DNS record to publish.

    Attributes:
        name (str): The owner name, fully qualified, without a trailing dot.
        ttl (int): Seconds.
        type_ (SetMailCatchAllResultRecordsItemType): The type of a [`DnsRecord`].
        value (str): The record's data as a zone file writes it (RFC 1035 section 5.1): names absolute,
            with their trailing dot; a TXT record's text as quoted strings of at most 255 bytes.
    """

    name: str
    ttl: int
    type_: SetMailCatchAllResultRecordsItemType
    value: str

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        ttl = self.ttl

        type_ = self.type_.value

        value = self.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "ttl": ttl,
                "type": type_,
                "value": value,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        ttl = d.pop("ttl")

        type_ = SetMailCatchAllResultRecordsItemType(d.pop("type"))

        value = d.pop("value")

        set_mail_catch_all_result_records_item = cls(
            name=name,
            ttl=ttl,
            type_=type_,
            value=value,
        )

        return set_mail_catch_all_result_records_item
