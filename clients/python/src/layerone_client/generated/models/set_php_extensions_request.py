from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.set_php_extensions_request_extensions_item import (
    SetPhpExtensionsRequestExtensionsItem,
)

T = TypeVar("T", bound="SetPhpExtensionsRequest")


@_attrs_define
class SetPhpExtensionsRequest:
    """
    Attributes:
        extensions (list[SetPhpExtensionsRequestExtensionsItem]): The extensions the account's code needs; every version
            it uses must load them.
        id (str): The account's id: one set of settings per account.
    """

    extensions: list[SetPhpExtensionsRequestExtensionsItem]
    id: str

    def to_dict(self) -> dict[str, Any]:
        extensions = []
        for extensions_item_data in self.extensions:
            extensions_item = extensions_item_data.value
            extensions.append(extensions_item)

        id = self.id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "extensions": extensions,
                "id": id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        extensions = []
        _extensions = d.pop("extensions")
        for extensions_item_data in _extensions:
            extensions_item = SetPhpExtensionsRequestExtensionsItem(
                extensions_item_data
            )

            extensions.append(extensions_item)

        id = d.pop("id")

        set_php_extensions_request = cls(
            extensions=extensions,
            id=id,
        )

        return set_php_extensions_request
