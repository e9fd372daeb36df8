from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.observe_php_versions_result_versions_item import (
        ObservePhpVersionsResultVersionsItem,
    )


T = TypeVar("T", bound="ObservePhpVersionsResult")


@_attrs_define
class ObservePhpVersionsResult:
    """
    Attributes:
        platform (str): The platform profile (`debian`, `cloudlinux`).
        versions (list[ObservePhpVersionsResultVersionsItem]): Every PHP version whose FPM binary this node has, oldest
            first.
    """

    platform: str
    versions: list[ObservePhpVersionsResultVersionsItem]

    def to_dict(self) -> dict[str, Any]:
        platform = self.platform

        versions = []
        for versions_item_data in self.versions:
            versions_item = versions_item_data.to_dict()
            versions.append(versions_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "platform": platform,
                "versions": versions,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.observe_php_versions_result_versions_item import (
            ObservePhpVersionsResultVersionsItem,
        )

        d = dict(src_dict)
        platform = d.pop("platform")

        versions = []
        _versions = d.pop("versions")
        for versions_item_data in _versions:
            versions_item = ObservePhpVersionsResultVersionsItem.from_dict(
                versions_item_data
            )

            versions.append(versions_item)

        observe_php_versions_result = cls(
            platform=platform,
            versions=versions,
        )

        return observe_php_versions_result
