from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ObserveAccountUsageResultQuota")


@_attrs_define
class ObserveAccountUsageResultQuota:
    """The home's quota as the kernel reports it now.

    Attributes:
        enforced (bool): True only when the kernel holds a limit on the home's bytes or inodes; an unlimited
            quota, or one only recorded, is not enforced.
        mechanism (Literal['btrfs_qgroup'] | Literal['none'] | Literal['user_quota']): What enforces an account's disk
            and inode quotas on this node.
        limit_bytes (int | None | Unset): The byte limit read back (`null`: none).
        limit_inodes (int | None | Unset): The inode limit read back (`null`: none; always on btrfs).
        used_bytes (int | None | Unset): Bytes the kernel counts against the quota (`null` where it counts none:
            mechanism
            `none`).
        used_inodes (int | None | Unset): Inodes the kernel counts against the quota (`null` on btrfs and with `none`).
    """

    enforced: bool
    mechanism: Literal["btrfs_qgroup", "none", "user_quota"]
    limit_bytes: int | None | Unset = UNSET
    limit_inodes: int | None | Unset = UNSET
    used_bytes: int | None | Unset = UNSET
    used_inodes: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        enforced = self.enforced

        mechanism: Literal["btrfs_qgroup", "none", "user_quota"]
        mechanism = self.mechanism

        limit_bytes: int | None | Unset
        if isinstance(self.limit_bytes, Unset):
            limit_bytes = UNSET
        else:
            limit_bytes = self.limit_bytes

        limit_inodes: int | None | Unset
        if isinstance(self.limit_inodes, Unset):
            limit_inodes = UNSET
        else:
            limit_inodes = self.limit_inodes

        used_bytes: int | None | Unset
        if isinstance(self.used_bytes, Unset):
            used_bytes = UNSET
        else:
            used_bytes = self.used_bytes

        used_inodes: int | None | Unset
        if isinstance(self.used_inodes, Unset):
            used_inodes = UNSET
        else:
            used_inodes = self.used_inodes

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "enforced": enforced,
                "mechanism": mechanism,
            }
        )
        if limit_bytes is not UNSET:
            field_dict["limit_bytes"] = limit_bytes
        if limit_inodes is not UNSET:
            field_dict["limit_inodes"] = limit_inodes
        if used_bytes is not UNSET:
            field_dict["used_bytes"] = used_bytes
        if used_inodes is not UNSET:
            field_dict["used_inodes"] = used_inodes

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        enforced = d.pop("enforced")

        def _parse_mechanism(
            data: object,
        ) -> Literal["btrfs_qgroup", "none", "user_quota"]:
            mechanism_type_0 = cast(Literal["btrfs_qgroup"], data)
            if mechanism_type_0 != "btrfs_qgroup":
                raise ValueError(
                    f"mechanism_type_0 must match const 'btrfs_qgroup', got '{mechanism_type_0}'"
                )
            return mechanism_type_0
            mechanism_type_1 = cast(Literal["user_quota"], data)
            if mechanism_type_1 != "user_quota":
                raise ValueError(
                    f"mechanism_type_1 must match const 'user_quota', got '{mechanism_type_1}'"
                )
            return mechanism_type_1
            mechanism_type_2 = cast(Literal["none"], data)
            if mechanism_type_2 != "none":
                raise ValueError(
                    f"mechanism_type_2 must match const 'none', got '{mechanism_type_2}'"
                )
            return mechanism_type_2

        mechanism = _parse_mechanism(d.pop("mechanism"))

        def _parse_limit_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        limit_bytes = _parse_limit_bytes(d.pop("limit_bytes", UNSET))

        def _parse_limit_inodes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        limit_inodes = _parse_limit_inodes(d.pop("limit_inodes", UNSET))

        def _parse_used_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        used_bytes = _parse_used_bytes(d.pop("used_bytes", UNSET))

        def _parse_used_inodes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        used_inodes = _parse_used_inodes(d.pop("used_inodes", UNSET))

        observe_account_usage_result_quota = cls(
            enforced=enforced,
            mechanism=mechanism,
            limit_bytes=limit_bytes,
            limit_inodes=limit_inodes,
            used_bytes=used_bytes,
            used_inodes=used_inodes,
        )

        return observe_account_usage_result_quota
