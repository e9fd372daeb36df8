from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RemoveErrorPagesRequest")


@_attrs_define
class RemoveErrorPagesRequest:
    """
    Attributes:
        account (str): The account that owns it.
        id (str): The resource's id, as the operation that declared it named it (for the settings kept
            per web domain, a PHP version or an IP block, the web domain's id).
    """

    account: str
    id: str

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        remove_error_pages_request = cls(
            account=account,
            id=id,
        )

        return remove_error_pages_request
