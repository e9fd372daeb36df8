from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ObserveRuntimeResultDisksItem")


@_attrs_define
class ObserveRuntimeResultDisksItem:
    """
    Attributes:
        available_bytes (int):
        free_inodes (int):
        path (str): `/`, `/home` or `/var/lib/mysql`.
        total_bytes (int):
        total_inodes (int):
    """

    available_bytes: int
    free_inodes: int
    path: str
    total_bytes: int
    total_inodes: int

    def to_dict(self) -> dict[str, Any]:
        available_bytes = self.available_bytes

        free_inodes = self.free_inodes

        path = self.path

        total_bytes = self.total_bytes

        total_inodes = self.total_inodes

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "available_bytes": available_bytes,
                "free_inodes": free_inodes,
                "path": path,
                "total_bytes": total_bytes,
                "total_inodes": total_inodes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        available_bytes = d.pop("available_bytes")

        free_inodes = d.pop("free_inodes")

        path = d.pop("path")

        total_bytes = d.pop("total_bytes")

        total_inodes = d.pop("total_inodes")

        observe_runtime_result_disks_item = cls(
            available_bytes=available_bytes,
            free_inodes=free_inodes,
            path=path,
            total_bytes=total_bytes,
            total_inodes=total_inodes,
        )

        return observe_runtime_result_disks_item
