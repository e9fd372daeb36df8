from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="EnsureMailForwarderRequest")


@_attrs_define
class EnsureMailForwarderRequest:
    """
    Attributes:
        account (str):
        address (str): An address of one of the account's mail domains, not a mailbox.
        destinations (list[str]):
        id (str):
    """

    account: str
    address: str
    destinations: list[str]
    id: str

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        address = self.address

        destinations = self.destinations

        id = self.id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "address": address,
                "destinations": destinations,
                "id": id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        address = d.pop("address")

        destinations = cast(list[str], d.pop("destinations"))

        id = d.pop("id")

        ensure_mail_forwarder_request = cls(
            account=account,
            address=address,
            destinations=destinations,
            id=id,
        )

        return ensure_mail_forwarder_request
