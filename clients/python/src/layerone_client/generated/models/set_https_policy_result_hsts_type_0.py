from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="SetHttpsPolicyResultHstsType0")


@_attrs_define
class SetHttpsPolicyResultHstsType0:
    """The `Strict-Transport-Security` header of a domain's HTTPS answers.

    Attributes:
        max_age (int): `max-age`, in seconds (0 tells browsers to forget the policy).
        include_subdomains (bool | Unset): Adds `includeSubDomains`: the policy then covers every name beneath the
            domain too. Default: False.
    """

    max_age: int
    include_subdomains: bool | Unset = False

    def to_dict(self) -> dict[str, Any]:
        max_age = self.max_age

        include_subdomains = self.include_subdomains

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "max_age": max_age,
            }
        )
        if include_subdomains is not UNSET:
            field_dict["include_subdomains"] = include_subdomains

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        max_age = d.pop("max_age")

        include_subdomains = d.pop("include_subdomains", UNSET)

        set_https_policy_result_hsts_type_0 = cls(
            max_age=max_age,
            include_subdomains=include_subdomains,
        )

        return set_https_policy_result_hsts_type_0
