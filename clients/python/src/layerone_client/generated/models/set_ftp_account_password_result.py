from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.set_ftp_account_password_result_state import (
    SetFtpAccountPasswordResultState,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="SetFtpAccountPasswordResult")


@_attrs_define
class SetFtpAccountPasswordResult:
    """The login as `pure-pw show` reads it from the installed file.

    Attributes:
        state (SetFtpAccountPasswordResultState): Whether a resource exists after an operation: what the OS shows, not
            what was asked.
        directory (None | str | Unset): The absolute directory the login is jailed to.
        gid (int | None | Unset):
        login (None | str | Unset):
        uid (int | None | Unset):
    """

    state: SetFtpAccountPasswordResultState
    directory: None | str | Unset = UNSET
    gid: int | None | Unset = UNSET
    login: None | str | Unset = UNSET
    uid: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        state = self.state.value

        directory: None | str | Unset
        if isinstance(self.directory, Unset):
            directory = UNSET
        else:
            directory = self.directory

        gid: int | None | Unset
        if isinstance(self.gid, Unset):
            gid = UNSET
        else:
            gid = self.gid

        login: None | str | Unset
        if isinstance(self.login, Unset):
            login = UNSET
        else:
            login = self.login

        uid: int | None | Unset
        if isinstance(self.uid, Unset):
            uid = UNSET
        else:
            uid = self.uid

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
            }
        )
        if directory is not UNSET:
            field_dict["directory"] = directory
        if gid is not UNSET:
            field_dict["gid"] = gid
        if login is not UNSET:
            field_dict["login"] = login
        if uid is not UNSET:
            field_dict["uid"] = uid

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        state = SetFtpAccountPasswordResultState(d.pop("state"))

        def _parse_directory(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        directory = _parse_directory(d.pop("directory", UNSET))

        def _parse_gid(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        gid = _parse_gid(d.pop("gid", UNSET))

        def _parse_login(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        login = _parse_login(d.pop("login", UNSET))

        def _parse_uid(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        uid = _parse_uid(d.pop("uid", UNSET))

        set_ftp_account_password_result = cls(
            state=state,
            directory=directory,
            gid=gid,
            login=login,
            uid=uid,
        )

        return set_ftp_account_password_result
