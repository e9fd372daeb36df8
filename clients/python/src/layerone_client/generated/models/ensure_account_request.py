from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.ensure_account_request_shell import EnsureAccountRequestShell
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureAccountRequest")


@_attrs_define
class EnsureAccountRequest:
    """Create or converge a tenant's account.

    Attributes:
        id (str): The account id; every other resource of the tenant names it as `account`.
        username (str): The system user name. Fixed once created.
        disk_quota_mib (int | Unset): Disk quota in MiB (0, the default: unlimited, accepted on every node). Enforced by
            the
            file system of `/home`: a btrfs qgroup limit on the home's subvolume, or a hard user
            quota where `/home` has user quotas on; where nothing can enforce it, a quota other
            than 0 fails `quota_unsupported`, naming this field and the file system. Default: 0.
        inode_quota (int | Unset): Inode quota (0, the default: unlimited). Enforced by user quotas only: btrfs qgroups
            limit bytes, so on btrfs (as where nothing enforces quotas) an inode quota other than
            0 fails `quota_unsupported`. Default: 0.
        shell (EnsureAccountRequestShell | Unset): A tenant's login shell, from a closed list. Default:
            EnsureAccountRequestShell.NOLOGIN.
    """

    id: str
    username: str
    disk_quota_mib: int | Unset = 0
    inode_quota: int | Unset = 0
    shell: EnsureAccountRequestShell | Unset = EnsureAccountRequestShell.NOLOGIN

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        username = self.username

        disk_quota_mib = self.disk_quota_mib

        inode_quota = self.inode_quota

        shell: str | Unset = UNSET
        if not isinstance(self.shell, Unset):
            shell = self.shell.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "username": username,
            }
        )
        if disk_quota_mib is not UNSET:
            field_dict["disk_quota_mib"] = disk_quota_mib
        if inode_quota is not UNSET:
            field_dict["inode_quota"] = inode_quota
        if shell is not UNSET:
            field_dict["shell"] = shell

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        username = d.pop("username")

        disk_quota_mib = d.pop("disk_quota_mib", UNSET)

        inode_quota = d.pop("inode_quota", UNSET)

        _shell = d.pop("shell", UNSET)
        shell: EnsureAccountRequestShell | Unset
        if isinstance(_shell, Unset):
            shell = UNSET
        else:
            shell = EnsureAccountRequestShell(_shell)

        ensure_account_request = cls(
            id=id,
            username=username,
            disk_quota_mib=disk_quota_mib,
            inode_quota=inode_quota,
            shell=shell,
        )

        return ensure_account_request
