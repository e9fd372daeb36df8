from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureFtpAccountRequest")


@_attrs_define
class EnsureFtpAccountRequest:
    """
    Attributes:
        account (str):
        id (str):
        login (str): The FTP login; unique on the node, and not the name of a system user.
        password_hash (str): A crypt SHA-512 hash (`$6$...`).
        directory (None | str | Unset): The directory the login is jailed to, relative to the home (created as the
            tenant
            when missing). Default: the home itself.
    """

    account: str
    id: str
    login: str
    password_hash: str
    directory: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        login = self.login

        password_hash = self.password_hash

        directory: None | str | Unset
        if isinstance(self.directory, Unset):
            directory = UNSET
        else:
            directory = self.directory

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "login": login,
                "password_hash": password_hash,
            }
        )
        if directory is not UNSET:
            field_dict["directory"] = directory

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        login = d.pop("login")

        password_hash = d.pop("password_hash")

        def _parse_directory(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        directory = _parse_directory(d.pop("directory", UNSET))

        ensure_ftp_account_request = cls(
            account=account,
            id=id,
            login=login,
            password_hash=password_hash,
            directory=directory,
        )

        return ensure_ftp_account_request
