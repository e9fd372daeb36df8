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

T = TypeVar("T", bound="AuditPageEntriesItemOriginType0Type2")


@_attrs_define
class AuditPageEntriesItemOriginType0Type2:
    """The API's local socket: a session on the machine, by the uid its kernel credentials
    (`SO_PEERCRED`) gave.

        Attributes:
            uid (int):
            via (Literal['local']):
    """

    uid: int
    via: Literal["local"]

    def to_dict(self) -> dict[str, Any]:
        uid = self.uid

        via = self.via

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "uid": uid,
                "via": via,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        uid = d.pop("uid")

        via = cast(Literal["local"], d.pop("via"))
        if via != "local":
            raise ValueError(f"via must match const 'local', got '{via}'")

        audit_page_entries_item_origin_type_0_type_2 = cls(
            uid=uid,
            via=via,
        )

        return audit_page_entries_item_origin_type_0_type_2
