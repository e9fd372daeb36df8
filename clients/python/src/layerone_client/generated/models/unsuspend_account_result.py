from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="UnsuspendAccountResult")


@_attrs_define
class UnsuspendAccountResult:
    """An account's suspension after the change, and what the account's tenant is refused
    now: each list names the account's resources that a client is refused, whether for the
    account's suspension or their own (a web domain, mailbox or FTP login suspended on its
    own stays refused when the account is unsuspended).

        Attributes:
            ftp_logins (list[str]): The account's FTP logins that pure-ftpd does not know.
            mailboxes (list[str]): The addresses of the account's mailboxes whose logins fail (IMAP, POP3, SMTP AUTH);
                mail to them is still delivered.
            suspended (bool): Whether the account is suspended: its user's password locked and the user expired.
            username (str):
            web_domains (list[str]): The account's web domains whose sites answer 403 (the ACME challenge path excepted).
    """

    ftp_logins: list[str]
    mailboxes: list[str]
    suspended: bool
    username: str
    web_domains: list[str]

    def to_dict(self) -> dict[str, Any]:
        ftp_logins = self.ftp_logins

        mailboxes = self.mailboxes

        suspended = self.suspended

        username = self.username

        web_domains = self.web_domains

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "ftp_logins": ftp_logins,
                "mailboxes": mailboxes,
                "suspended": suspended,
                "username": username,
                "web_domains": web_domains,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        ftp_logins = cast(list[str], d.pop("ftp_logins"))

        mailboxes = cast(list[str], d.pop("mailboxes"))

        suspended = d.pop("suspended")

        username = d.pop("username")

        web_domains = cast(list[str], d.pop("web_domains"))

        unsuspend_account_result = cls(
            ftp_logins=ftp_logins,
            mailboxes=mailboxes,
            suspended=suspended,
            username=username,
            web_domains=web_domains,
        )

        return unsuspend_account_result
