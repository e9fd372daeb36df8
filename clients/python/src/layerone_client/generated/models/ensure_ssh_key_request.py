from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="EnsureSshKeyRequest")


@_attrs_define
class EnsureSshKeyRequest:
    """
    Attributes:
        account (str):
        id (str):
        key (str): One OpenSSH public key line, without options.
    """

    account: str
    id: str
    key: str

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        key = self.key

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "key": key,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        key = d.pop("key")

        ensure_ssh_key_request = cls(
            account=account,
            id=id,
            key=key,
        )

        return ensure_ssh_key_request
