from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.set_account_password_result_state import SetAccountPasswordResultState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.set_account_password_result_quota_type_0 import (
        SetAccountPasswordResultQuotaType0,
    )


T = TypeVar("T", bound="SetAccountPasswordResult")


@_attrs_define
class SetAccountPasswordResult:
    """The account as the OS shows it after the change.

    Attributes:
        state (SetAccountPasswordResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
        disk_quota_mib (int | None | Unset):
        gid (int | None | Unset):
        home (None | str | Unset):
        inode_quota (int | None | Unset):
        quota (None | SetAccountPasswordResultQuotaType0 | Unset): The quota as the kernel holds it (`ensure_account`
            only).
        shell (None | str | Unset):
        suspended (bool | None | Unset):
        uid (int | None | Unset):
        username (None | str | Unset):
    """

    state: SetAccountPasswordResultState
    disk_quota_mib: int | None | Unset = UNSET
    gid: int | None | Unset = UNSET
    home: None | str | Unset = UNSET
    inode_quota: int | None | Unset = UNSET
    quota: None | SetAccountPasswordResultQuotaType0 | Unset = UNSET
    shell: None | str | Unset = UNSET
    suspended: bool | None | Unset = UNSET
    uid: int | None | Unset = UNSET
    username: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.set_account_password_result_quota_type_0 import (
            SetAccountPasswordResultQuotaType0,
        )

        state = self.state.value

        disk_quota_mib: int | None | Unset
        if isinstance(self.disk_quota_mib, Unset):
            disk_quota_mib = UNSET
        else:
            disk_quota_mib = self.disk_quota_mib

        gid: int | None | Unset
        if isinstance(self.gid, Unset):
            gid = UNSET
        else:
            gid = self.gid

        home: None | str | Unset
        if isinstance(self.home, Unset):
            home = UNSET
        else:
            home = self.home

        inode_quota: int | None | Unset
        if isinstance(self.inode_quota, Unset):
            inode_quota = UNSET
        else:
            inode_quota = self.inode_quota

        quota: dict[str, Any] | None | Unset
        if isinstance(self.quota, Unset):
            quota = UNSET
        elif isinstance(self.quota, SetAccountPasswordResultQuotaType0):
            quota = self.quota.to_dict()
        else:
            quota = self.quota

        shell: None | str | Unset
        if isinstance(self.shell, Unset):
            shell = UNSET
        else:
            shell = self.shell

        suspended: bool | None | Unset
        if isinstance(self.suspended, Unset):
            suspended = UNSET
        else:
            suspended = self.suspended

        uid: int | None | Unset
        if isinstance(self.uid, Unset):
            uid = UNSET
        else:
            uid = self.uid

        username: None | str | Unset
        if isinstance(self.username, Unset):
            username = UNSET
        else:
            username = self.username

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
            }
        )
        if disk_quota_mib is not UNSET:
            field_dict["disk_quota_mib"] = disk_quota_mib
        if gid is not UNSET:
            field_dict["gid"] = gid
        if home is not UNSET:
            field_dict["home"] = home
        if inode_quota is not UNSET:
            field_dict["inode_quota"] = inode_quota
        if quota is not UNSET:
            field_dict["quota"] = quota
        if shell is not UNSET:
            field_dict["shell"] = shell
        if suspended is not UNSET:
            field_dict["suspended"] = suspended
        if uid is not UNSET:
            field_dict["uid"] = uid
        if username is not UNSET:
            field_dict["username"] = username

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.set_account_password_result_quota_type_0 import (
            SetAccountPasswordResultQuotaType0,
        )

        d = dict(src_dict)
        state = SetAccountPasswordResultState(d.pop("state"))

        def _parse_disk_quota_mib(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        disk_quota_mib = _parse_disk_quota_mib(d.pop("disk_quota_mib", UNSET))

        def _parse_gid(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        gid = _parse_gid(d.pop("gid", UNSET))

        def _parse_home(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        home = _parse_home(d.pop("home", UNSET))

        def _parse_inode_quota(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        inode_quota = _parse_inode_quota(d.pop("inode_quota", UNSET))

        def _parse_quota(
            data: object,
        ) -> None | SetAccountPasswordResultQuotaType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                quota_type_0 = SetAccountPasswordResultQuotaType0.from_dict(data)

                return quota_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SetAccountPasswordResultQuotaType0 | Unset, data)

        quota = _parse_quota(d.pop("quota", UNSET))

        def _parse_shell(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        shell = _parse_shell(d.pop("shell", UNSET))

        def _parse_suspended(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        suspended = _parse_suspended(d.pop("suspended", UNSET))

        def _parse_uid(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        uid = _parse_uid(d.pop("uid", UNSET))

        def _parse_username(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        username = _parse_username(d.pop("username", UNSET))

        set_account_password_result = cls(
            state=state,
            disk_quota_mib=disk_quota_mib,
            gid=gid,
            home=home,
            inode_quota=inode_quota,
            quota=quota,
            shell=shell,
            suspended=suspended,
            uid=uid,
            username=username,
        )

        return set_account_password_result
