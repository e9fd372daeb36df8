from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_autoresponder_result_state import RemoveAutoresponderResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="RemoveAutoresponderResult")


@_attrs_define
class RemoveAutoresponderResult:
    """
    Attributes:
        state (RemoveAutoresponderResultState): Whether a resource exists after an operation: what the OS shows, not
            what was asked.
        address (None | str | Unset): The mailbox that answers.
    """

    state: RemoveAutoresponderResultState
    address: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        state = self.state.value

        address: None | str | Unset
        if isinstance(self.address, Unset):
            address = UNSET
        else:
            address = self.address

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
            }
        )
        if address is not UNSET:
            field_dict["address"] = address

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        state = RemoveAutoresponderResultState(d.pop("state"))

        def _parse_address(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        address = _parse_address(d.pop("address", UNSET))

        remove_autoresponder_result = cls(
            state=state,
            address=address,
        )

        return remove_autoresponder_result
