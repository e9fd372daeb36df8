from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SetAccountPasswordRequest")


@_attrs_define
class SetAccountPasswordRequest:
    """Set the password of an account's system user.

    Attributes:
        id (str):
        password_hash (str): A crypt SHA-512 hash (`$6$...`); the node never sees the password itself.
    """

    id: str
    password_hash: str

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        password_hash = self.password_hash

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "password_hash": password_hash,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        password_hash = d.pop("password_hash")

        set_account_password_request = cls(
            id=id,
            password_hash=password_hash,
        )

        return set_account_password_request
