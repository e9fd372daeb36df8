from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SetMysqlUserPasswordRequest")


@_attrs_define
class SetMysqlUserPasswordRequest:
    """
    Attributes:
        account (str):
        id (str):
        password_hash (str):
    """

    account: str
    id: str
    password_hash: str

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        password_hash = self.password_hash

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "password_hash": password_hash,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        password_hash = d.pop("password_hash")

        set_mysql_user_password_request = cls(
            account=account,
            id=id,
            password_hash=password_hash,
        )

        return set_mysql_user_password_request
