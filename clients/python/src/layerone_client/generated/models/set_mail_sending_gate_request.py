from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SetMailSendingGateRequest")


@_attrs_define
class SetMailSendingGateRequest:
    """
    Attributes:
        account (str):
        id (str):
        open_ (bool): `true` once the domain's DNS is published: the domain may send.
    """

    account: str
    id: str
    open_: bool

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        open_ = self.open_

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "open": open_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        open_ = d.pop("open")

        set_mail_sending_gate_request = cls(
            account=account,
            id=id,
            open_=open_,
        )

        return set_mail_sending_gate_request
