from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureAutoresponderRequest")


@_attrs_define
class EnsureAutoresponderRequest:
    """
    Attributes:
        account (str):
        body (str):
        id (str):
        mailbox (str): The mailbox (its resource id) that answers.
        subject (str):
        days (int | Unset): How many days before the same sender is answered again. Default: 7.
        from_ (None | str | Unset): Answer from this day on (inclusive); always when absent.
        until (None | str | Unset): Answer until this day (inclusive); always when absent.
    """

    account: str
    body: str
    id: str
    mailbox: str
    subject: str
    days: int | Unset = 7
    from_: None | str | Unset = UNSET
    until: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        body = self.body

        id = self.id

        mailbox = self.mailbox

        subject = self.subject

        days = self.days

        from_: None | str | Unset
        if isinstance(self.from_, Unset):
            from_ = UNSET
        else:
            from_ = self.from_

        until: None | str | Unset
        if isinstance(self.until, Unset):
            until = UNSET
        else:
            until = self.until

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "body": body,
                "id": id,
                "mailbox": mailbox,
                "subject": subject,
            }
        )
        if days is not UNSET:
            field_dict["days"] = days
        if from_ is not UNSET:
            field_dict["from"] = from_
        if until is not UNSET:
            field_dict["until"] = until

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        body = d.pop("body")

        id = d.pop("id")

        mailbox = d.pop("mailbox")

        subject = d.pop("subject")

        days = d.pop("days", UNSET)

        def _parse_from_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        from_ = _parse_from_(d.pop("from", UNSET))

        def _parse_until(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        until = _parse_until(d.pop("until", UNSET))

        ensure_autoresponder_request = cls(
            account=account,
            body=body,
            id=id,
            mailbox=mailbox,
            subject=subject,
            days=days,
            from_=from_,
            until=until,
        )

        return ensure_autoresponder_request
