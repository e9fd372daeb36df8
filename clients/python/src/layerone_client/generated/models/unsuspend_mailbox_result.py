from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.unsuspend_mailbox_result_state import UnsuspendMailboxResultState

T = TypeVar("T", bound="UnsuspendMailboxResult")


@_attrs_define
class UnsuspendMailboxResult:
    """
    Attributes:
        address (str):
        state (UnsuspendMailboxResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
        suspended (bool): Whether the mailbox now refuses every login (mail is still delivered to it).
    """

    address: str
    state: UnsuspendMailboxResultState
    suspended: bool

    def to_dict(self) -> dict[str, Any]:
        address = self.address

        state = self.state.value

        suspended = self.suspended

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "address": address,
                "state": state,
                "suspended": suspended,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        address = d.pop("address")

        state = UnsuspendMailboxResultState(d.pop("state"))

        suspended = d.pop("suspended")

        unsuspend_mailbox_result = cls(
            address=address,
            state=state,
            suspended=suspended,
        )

        return unsuspend_mailbox_result
