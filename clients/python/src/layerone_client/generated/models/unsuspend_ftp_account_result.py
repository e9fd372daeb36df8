from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.unsuspend_ftp_account_result_state import UnsuspendFtpAccountResultState

T = TypeVar("T", bound="UnsuspendFtpAccountResult")


@_attrs_define
class UnsuspendFtpAccountResult:
    """
    Attributes:
        login (str):
        state (UnsuspendFtpAccountResultState): Whether a resource exists after an operation: what the OS shows, not
            what was asked.
        suspended (bool): Whether the login is now left out of pure-ftpd's users (its files are untouched).
    """

    login: str
    state: UnsuspendFtpAccountResultState
    suspended: bool

    def to_dict(self) -> dict[str, Any]:
        login = self.login

        state = self.state.value

        suspended = self.suspended

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "login": login,
                "state": state,
                "suspended": suspended,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        login = d.pop("login")

        state = UnsuspendFtpAccountResultState(d.pop("state"))

        suspended = d.pop("suspended")

        unsuspend_ftp_account_result = cls(
            login=login,
            state=state,
            suspended=suspended,
        )

        return unsuspend_ftp_account_result
