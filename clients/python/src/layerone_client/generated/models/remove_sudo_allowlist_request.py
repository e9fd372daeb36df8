from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RemoveSudoAllowlistRequest")


@_attrs_define
class RemoveSudoAllowlistRequest:
    """Remove the node's sudo allowlist (its drop-in).

    Attributes:
        generation (int): Greater than the generation installed now, or the request is refused.
        id (str):
    """

    generation: int
    id: str

    def to_dict(self) -> dict[str, Any]:
        generation = self.generation

        id = self.id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "generation": generation,
                "id": id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        generation = d.pop("generation")

        id = d.pop("id")

        remove_sudo_allowlist_request = cls(
            generation=generation,
            id=id,
        )

        return remove_sudo_allowlist_request
