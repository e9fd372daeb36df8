from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_ip_block_result_state import RemoveIpBlockResultState

T = TypeVar("T", bound="RemoveIpBlockResult")


@_attrs_define
class RemoveIpBlockResult:
    """
    Attributes:
        blocked (list[str]): The addresses and networks the vhost now denies.
        state (RemoveIpBlockResultState): Whether a resource exists after an operation: what the OS shows, not what was
            asked.
    """

    blocked: list[str]
    state: RemoveIpBlockResultState

    def to_dict(self) -> dict[str, Any]:
        blocked = self.blocked

        state = self.state.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "blocked": blocked,
                "state": state,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        blocked = cast(list[str], d.pop("blocked"))

        state = RemoveIpBlockResultState(d.pop("state"))

        remove_ip_block_result = cls(
            blocked=blocked,
            state=state,
        )

        return remove_ip_block_result
