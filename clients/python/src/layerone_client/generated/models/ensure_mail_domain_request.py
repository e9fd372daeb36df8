from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="EnsureMailDomainRequest")


@_attrs_define
class EnsureMailDomainRequest:
    """
    Attributes:
        account (str):
        domain (str): A domain name; Unicode input is converted to lowercase punycode
        id (str):
    """

    account: str
    domain: str
    id: str

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        domain = self.domain

        id = self.id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "domain": domain,
                "id": id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        domain = d.pop("domain")

        id = d.pop("id")

        ensure_mail_domain_request = cls(
            account=account,
            domain=domain,
            id=id,
        )

        return ensure_mail_domain_request
