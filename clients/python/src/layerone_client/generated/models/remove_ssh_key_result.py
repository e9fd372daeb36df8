from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_ssh_key_result_state import RemoveSshKeyResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="RemoveSshKeyResult")


@_attrs_define
class RemoveSshKeyResult:
    """
    Attributes:
        keys_in_file (int): How many keys the account's `authorized_keys` now holds.
        state (RemoveSshKeyResultState): Whether a resource exists after an operation: what the OS shows, not what was
            asked.
        fingerprint (None | str | Unset): `SHA256:...` of the key now in `authorized_keys`.
    """

    keys_in_file: int
    state: RemoveSshKeyResultState
    fingerprint: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        keys_in_file = self.keys_in_file

        state = self.state.value

        fingerprint: None | str | Unset
        if isinstance(self.fingerprint, Unset):
            fingerprint = UNSET
        else:
            fingerprint = self.fingerprint

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "keys_in_file": keys_in_file,
                "state": state,
            }
        )
        if fingerprint is not UNSET:
            field_dict["fingerprint"] = fingerprint

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        keys_in_file = d.pop("keys_in_file")

        state = RemoveSshKeyResultState(d.pop("state"))

        def _parse_fingerprint(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        fingerprint = _parse_fingerprint(d.pop("fingerprint", UNSET))

        remove_ssh_key_result = cls(
            keys_in_file=keys_in_file,
            state=state,
            fingerprint=fingerprint,
        )

        return remove_ssh_key_result
