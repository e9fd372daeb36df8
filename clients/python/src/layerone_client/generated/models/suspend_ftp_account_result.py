from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.suspend_ftp_account_result_state import SuspendFtpAccountResultState

T = TypeVar("T", bound="SuspendFtpAccountResult")


@_attrs_define
class SuspendFtpAccountResult:
    """
    Attributes:
        login (str):
        state (SuspendFtpAccountResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
        suspended (bool): Whether the login is now left out of pure-ftpd's users (its files are untouched).
    """

    login: str
    state: SuspendFtpAccountResultState
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

        state = SuspendFtpAccountResultState(d.pop("state"))

        suspended = d.pop("suspended")

        suspend_ftp_account_result = cls(
            login=login,
            state=state,
            suspended=suspended,
        )

        return suspend_ftp_account_result
