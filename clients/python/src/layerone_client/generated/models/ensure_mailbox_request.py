from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="EnsureMailboxRequest")


@_attrs_define
class EnsureMailboxRequest:
    """
    Attributes:
        account (str):
        domain (str): One of the account's mail domains.
        id (str):
        local_part (str):
        password (str): crypt(3) SHA-512; the node never sees the password.
        quota_mib (int): The quota in MiB; 0 is unlimited.
    """

    account: str
    domain: str
    id: str
    local_part: str
    password: str
    quota_mib: int

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        domain = self.domain

        id = self.id

        local_part = self.local_part

        password = self.password

        quota_mib = self.quota_mib

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "domain": domain,
                "id": id,
                "local_part": local_part,
                "password": password,
                "quota_mib": quota_mib,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        domain = d.pop("domain")

        id = d.pop("id")

        local_part = d.pop("local_part")

        password = d.pop("password")

        quota_mib = d.pop("quota_mib")

        ensure_mailbox_request = cls(
            account=account,
            domain=domain,
            id=id,
            local_part=local_part,
            password=password,
            quota_mib=quota_mib,
        )

        return ensure_mailbox_request
