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

T = TypeVar("T", bound="AuditPageEntriesItemOriginType0Type1")


@_attrs_define
class AuditPageEntriesItemOriginType0Type1:
    """The fleet's broker, where only the control plane may write what a node reads.

    Attributes:
        sequence (int): The request's sequence number in that stream.
        stream (str): The stream the request was read from: `FLEET_REQ` (the node's queue) or
            `KV_fleet_assign` (its assignment).
        via (Literal['fleet']):
    """

    sequence: int
    stream: str
    via: Literal["fleet"]

    def to_dict(self) -> dict[str, Any]:
        sequence = self.sequence

        stream = self.stream

        via = self.via

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "sequence": sequence,
                "stream": stream,
                "via": via,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        sequence = d.pop("sequence")

        stream = d.pop("stream")

        via = cast(Literal["fleet"], d.pop("via"))
        if via != "fleet":
            raise ValueError(f"via must match const 'fleet', got '{via}'")

        audit_page_entries_item_origin_type_0_type_1 = cls(
            sequence=sequence,
            stream=stream,
            via=via,
        )

        return audit_page_entries_item_origin_type_0_type_1
