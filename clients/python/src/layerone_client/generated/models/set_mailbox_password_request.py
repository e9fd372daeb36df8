from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SetMailboxPasswordRequest")


@_attrs_define
class SetMailboxPasswordRequest:
    """
    Attributes:
        account (str):
        id (str):
        password (str):
    """

    account: str
    id: str
    password: str

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        password = self.password

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "password": password,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        password = d.pop("password")

        set_mailbox_password_request = cls(
            account=account,
            id=id,
            password=password,
        )

        return set_mailbox_password_request
