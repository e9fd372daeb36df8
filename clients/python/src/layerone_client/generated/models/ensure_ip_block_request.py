from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="EnsureIpBlockRequest")


@_attrs_define
class EnsureIpBlockRequest:
    """
    Attributes:
        account (str):
        id (str): The web domain's id: one block list per domain.
        networks (list[str]): Addresses and CIDR networks answered 403 (the whole list; it replaces the last).
    """

    account: str
    id: str
    networks: list[str]

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        networks = self.networks

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "networks": networks,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        networks = cast(list[str], d.pop("networks"))

        ensure_ip_block_request = cls(
            account=account,
            id=id,
            networks=networks,
        )

        return ensure_ip_block_request
