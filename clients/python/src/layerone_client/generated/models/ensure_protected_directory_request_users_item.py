from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="EnsureProtectedDirectoryRequestUsersItem")


@_attrs_define
class EnsureProtectedDirectoryRequestUsersItem:
    """One user of a protected directory: a name and its crypt SHA-512 hash.

    Attributes:
        name (str):
        password_hash (str): crypt(3) SHA-512 (`$6$...`); Apache checks it with the system's crypt().
    """

    name: str
    password_hash: str

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        password_hash = self.password_hash

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "password_hash": password_hash,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        password_hash = d.pop("password_hash")

        ensure_protected_directory_request_users_item = cls(
            name=name,
            password_hash=password_hash,
        )

        return ensure_protected_directory_request_users_item
