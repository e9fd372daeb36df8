from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.suspend_mailbox_result_state import SuspendMailboxResultState

T = TypeVar("T", bound="SuspendMailboxResult")


@_attrs_define
class SuspendMailboxResult:
    """
    Attributes:
        address (str):
        state (SuspendMailboxResultState): Whether a resource exists after an operation: what the OS shows, not what was
            asked.
        suspended (bool): Whether the mailbox now refuses every login (mail is still delivered to it).
    """

    address: str
    state: SuspendMailboxResultState
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

        state = SuspendMailboxResultState(d.pop("state"))

        suspended = d.pop("suspended")

        suspend_mailbox_result = cls(
            address=address,
            state=state,
            suspended=suspended,
        )

        return suspend_mailbox_result
