from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RemoveDkimKeyResultDkimType0")


@_attrs_define
class RemoveDkimKeyResultDkimType0:
    """The DKIM public key record the control plane must publish.

    Attributes:
        name (str): The fully qualified name, without a trailing dot.
        value (str): The record's text, unsplit.
    """

    name: str
    value: str

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        value = self.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "value": value,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        value = d.pop("value")

        remove_dkim_key_result_dkim_type_0 = cls(
            name=name,
            value=value,
        )

        return remove_dkim_key_result_dkim_type_0
