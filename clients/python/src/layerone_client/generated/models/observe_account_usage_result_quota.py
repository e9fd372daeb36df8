from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.observe_account_usage_result_quota_mechanism import (
    ObserveAccountUsageResultQuotaMechanism,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ObserveAccountUsageResultQuota")


@_attrs_define
class ObserveAccountUsageResultQuota:
    """The home's quota as the kernel reports it now.

    Attributes:
        enforced (bool): True only when the kernel holds a limit on the home's bytes or inodes; an unlimited
            quota, or one only recorded, is not enforced.
        mechanism (ObserveAccountUsageResultQuotaMechanism): What enforces an account's disk and inode quotas on this
            node.

            - `btrfs_qgroup`: `/home` is btrfs and the home a subvolume limited by its qgroup: bytes only.
            - `user_quota`: `/home` has user quotas on: blocks and inodes per uid.
            - `none`: Nothing: only unlimited quotas.
        limit_bytes (int | None | Unset): The byte limit read back (`null`: none).
        limit_inodes (int | None | Unset): The inode limit read back (`null`: none; always on btrfs).
        used_bytes (int | None | Unset): Bytes the kernel counts against the quota (`null` where it counts none:
            mechanism
            `none`).
        used_inodes (int | None | Unset): Inodes the kernel counts against the quota (`null` on btrfs and with `none`).
    """

    enforced: bool
    mechanism: ObserveAccountUsageResultQuotaMechanism
    limit_bytes: int | None | Unset = UNSET
    limit_inodes: int | None | Unset = UNSET
    used_bytes: int | None | Unset = UNSET
    used_inodes: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        enforced = self.enforced

        mechanism = self.mechanism.value

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

        mechanism = ObserveAccountUsageResultQuotaMechanism(d.pop("mechanism"))

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
