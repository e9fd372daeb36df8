from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="SetMailCatchAllRequest")


@_attrs_define
class SetMailCatchAllRequest:
    """
    Attributes:
        account (str):
        id (str):
        mailbox (None | str | Unset): The mailbox (local part of this domain) that receives mail for unknown addresses;
            `null` turns the catch-all off.
    """

    account: str
    id: str
    mailbox: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        mailbox: None | str | Unset
        if isinstance(self.mailbox, Unset):
            mailbox = UNSET
        else:
            mailbox = self.mailbox

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
            }
        )
        if mailbox is not UNSET:
            field_dict["mailbox"] = mailbox

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        def _parse_mailbox(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mailbox = _parse_mailbox(d.pop("mailbox", UNSET))

        set_mail_catch_all_request = cls(
            account=account,
            id=id,
            mailbox=mailbox,
        )

        return set_mail_catch_all_request
