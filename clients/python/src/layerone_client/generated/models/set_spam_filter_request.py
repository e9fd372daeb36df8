from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.set_spam_filter_request_level import SetSpamFilterRequestLevel

T = TypeVar("T", bound="SetSpamFilterRequest")


@_attrs_define
class SetSpamFilterRequest:
    """
    Attributes:
        account (str):
        domain (str): One of the account's mail domains.
        id (str):
        level (SetSpamFilterRequestLevel): How hard a domain's incoming mail is filtered (Postfix restriction classes;
            see the
            `spam_filter` family).
    """

    account: str
    domain: str
    id: str
    level: SetSpamFilterRequestLevel

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        domain = self.domain

        id = self.id

        level = self.level.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "domain": domain,
                "id": id,
                "level": level,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        domain = d.pop("domain")

        id = d.pop("id")

        level = SetSpamFilterRequestLevel(d.pop("level"))

        set_spam_filter_request = cls(
            account=account,
            domain=domain,
            id=id,
            level=level,
        )

        return set_spam_filter_request
