from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.ensure_mailbox_result_state import EnsureMailboxResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureMailboxResult")


@_attrs_define
class EnsureMailboxResult:
    """
    Attributes:
        state (EnsureMailboxResultState): Whether a resource exists after an operation: what the OS shows, not what was
            asked.
        address (None | str | Unset):
        quota_mib (int | None | Unset):
    """

    state: EnsureMailboxResultState
    address: None | str | Unset = UNSET
    quota_mib: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        state = self.state.value

        address: None | str | Unset
        if isinstance(self.address, Unset):
            address = UNSET
        else:
            address = self.address

        quota_mib: int | None | Unset
        if isinstance(self.quota_mib, Unset):
            quota_mib = UNSET
        else:
            quota_mib = self.quota_mib

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
            }
        )
        if address is not UNSET:
            field_dict["address"] = address
        if quota_mib is not UNSET:
            field_dict["quota_mib"] = quota_mib

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        state = EnsureMailboxResultState(d.pop("state"))

        def _parse_address(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        address = _parse_address(d.pop("address", UNSET))

        def _parse_quota_mib(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        quota_mib = _parse_quota_mib(d.pop("quota_mib", UNSET))

        ensure_mailbox_result = cls(
            state=state,
            address=address,
            quota_mib=quota_mib,
        )

        return ensure_mailbox_result
