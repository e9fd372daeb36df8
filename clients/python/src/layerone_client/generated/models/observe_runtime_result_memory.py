from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ObserveRuntimeResultMemory")


@_attrs_define
class ObserveRuntimeResultMemory:
    """
    Attributes:
        available_bytes (int):
        swap_free_bytes (int):
        swap_total_bytes (int):
        total_bytes (int):
    """

    available_bytes: int
    swap_free_bytes: int
    swap_total_bytes: int
    total_bytes: int

    def to_dict(self) -> dict[str, Any]:
        available_bytes = self.available_bytes

        swap_free_bytes = self.swap_free_bytes

        swap_total_bytes = self.swap_total_bytes

        total_bytes = self.total_bytes

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "available_bytes": available_bytes,
                "swap_free_bytes": swap_free_bytes,
                "swap_total_bytes": swap_total_bytes,
                "total_bytes": total_bytes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        available_bytes = d.pop("available_bytes")

        swap_free_bytes = d.pop("swap_free_bytes")

        swap_total_bytes = d.pop("swap_total_bytes")

        total_bytes = d.pop("total_bytes")

        observe_runtime_result_memory = cls(
            available_bytes=available_bytes,
            swap_free_bytes=swap_free_bytes,
            swap_total_bytes=swap_total_bytes,
            total_bytes=total_bytes,
        )

        return observe_runtime_result_memory
