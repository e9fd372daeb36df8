from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.ensure_protected_directory_request_users_item import (
        EnsureProtectedDirectoryRequestUsersItem,
    )


T = TypeVar("T", bound="EnsureProtectedDirectoryRequest")


@_attrs_define
class EnsureProtectedDirectoryRequest:
    """
    Attributes:
        account (str):
        id (str):
        path (str): The directory, relative to the document root (never `.well-known`).
        realm (str): What the browser's password dialog shows.
        users (list[EnsureProtectedDirectoryRequestUsersItem]): Who may enter: names and crypt SHA-512 hashes (the whole
            list; it replaces the last).
        web_domain (str): The web domain whose document root holds the directory.
    """

    account: str
    id: str
    path: str
    realm: str
    users: list[EnsureProtectedDirectoryRequestUsersItem]
    web_domain: str

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        path = self.path

        realm = self.realm

        users = []
        for users_item_data in self.users:
            users_item = users_item_data.to_dict()
            users.append(users_item)

        web_domain = self.web_domain

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "path": path,
                "realm": realm,
                "users": users,
                "web_domain": web_domain,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.ensure_protected_directory_request_users_item import (
            EnsureProtectedDirectoryRequestUsersItem,
        )

        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        path = d.pop("path")

        realm = d.pop("realm")

        users = []
        _users = d.pop("users")
        for users_item_data in _users:
            users_item = EnsureProtectedDirectoryRequestUsersItem.from_dict(
                users_item_data
            )

            users.append(users_item)

        web_domain = d.pop("web_domain")

        ensure_protected_directory_request = cls(
            account=account,
            id=id,
            path=path,
            realm=realm,
            users=users,
            web_domain=web_domain,
        )

        return ensure_protected_directory_request
