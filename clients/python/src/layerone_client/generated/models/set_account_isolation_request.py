from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SetAccountIsolationRequest")


@_attrs_define
class SetAccountIsolationRequest:
    """Puts an account into its CageFS, or takes it out.

    Attributes:
        cagefs (bool): CageFS on (`true`) or off.
        id (str):
    """

    cagefs: bool
    id: str

    def to_dict(self) -> dict[str, Any]:
        cagefs = self.cagefs

        id = self.id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cagefs": cagefs,
                "id": id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cagefs = d.pop("cagefs")

        id = d.pop("id")

        set_account_isolation_request = cls(
            cagefs=cagefs,
            id=id,
        )

        return set_account_isolation_request
