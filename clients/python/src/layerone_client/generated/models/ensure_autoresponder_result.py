from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.ensure_autoresponder_result_state import EnsureAutoresponderResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureAutoresponderResult")


@_attrs_define
class EnsureAutoresponderResult:
    """
    Attributes:
        state (EnsureAutoresponderResultState): Whether a resource exists after an operation: what the OS shows, not
            what was asked.
        address (None | str | Unset): The mailbox that answers.
    """

    state: EnsureAutoresponderResultState
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
        state = EnsureAutoresponderResultState(d.pop("state"))

        def _parse_address(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        address = _parse_address(d.pop("address", UNSET))

        ensure_autoresponder_result = cls(
            state=state,
            address=address,
        )

        return ensure_autoresponder_result
