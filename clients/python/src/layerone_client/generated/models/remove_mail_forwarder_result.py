from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_mail_forwarder_result_state import RemoveMailForwarderResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="RemoveMailForwarderResult")


@_attrs_define
class RemoveMailForwarderResult:
    """
    Attributes:
        destinations (list[str]):
        state (RemoveMailForwarderResultState): Whether a resource exists after an operation: what the OS shows, not
            what was asked.
        address (None | str | Unset):
    """

    destinations: list[str]
    state: RemoveMailForwarderResultState
    address: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        destinations = self.destinations

        state = self.state.value

        address: None | str | Unset
        if isinstance(self.address, Unset):
            address = UNSET
        else:
            address = self.address

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "destinations": destinations,
                "state": state,
            }
        )
        if address is not UNSET:
            field_dict["address"] = address

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        destinations = cast(list[str], d.pop("destinations"))

        state = RemoveMailForwarderResultState(d.pop("state"))

        def _parse_address(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        address = _parse_address(d.pop("address", UNSET))

        remove_mail_forwarder_result = cls(
            destinations=destinations,
            state=state,
            address=address,
        )

        return remove_mail_forwarder_result
