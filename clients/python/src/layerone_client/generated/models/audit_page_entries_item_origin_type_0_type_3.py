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

T = TypeVar("T", bound="AuditPageEntriesItemOriginType0Type3")


@_attrs_define
class AuditPageEntriesItemOriginType0Type3:
    """The node itself (the runner's certificate renewals).

    Attributes:
        via (Literal['node']):
    """

    via: Literal["node"]

    def to_dict(self) -> dict[str, Any]:
        via = self.via

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "via": via,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        via = cast(Literal["node"], d.pop("via"))
        if via != "node":
            raise ValueError(f"via must match const 'node', got '{via}'")

        audit_page_entries_item_origin_type_0_type_3 = cls(
            via=via,
        )

        return audit_page_entries_item_origin_type_0_type_3
