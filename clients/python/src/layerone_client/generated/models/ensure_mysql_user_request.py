from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureMysqlUserRequest")


@_attrs_define
class EnsureMysqlUserRequest:
    """
    Attributes:
        account (str):
        id (str):
        name (str): The account's part of the name; the user is `<username>_<name>`.
        password_hash (str): `PASSWORD('...')`: `*` and 40 hexadecimal digits.
        hosts (list[str] | Unset): Where the user may connect from; `["localhost"]` by default.
    """

    account: str
    id: str
    name: str
    password_hash: str
    hosts: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        name = self.name

        password_hash = self.password_hash

        hosts: list[str] | Unset = UNSET
        if not isinstance(self.hosts, Unset):
            hosts = self.hosts

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "name": name,
                "password_hash": password_hash,
            }
        )
        if hosts is not UNSET:
            field_dict["hosts"] = hosts

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        name = d.pop("name")

        password_hash = d.pop("password_hash")

        hosts = cast(list[str], d.pop("hosts", UNSET))

        ensure_mysql_user_request = cls(
            account=account,
            id=id,
            name=name,
            password_hash=password_hash,
            hosts=hosts,
        )

        return ensure_mysql_user_request
