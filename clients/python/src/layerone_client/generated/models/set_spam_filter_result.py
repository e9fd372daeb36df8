from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.set_spam_filter_result_level import SetSpamFilterResultLevel
from ..types import UNSET, Unset

T = TypeVar("T", bound="SetSpamFilterResult")


@_attrs_define
class SetSpamFilterResult:
    """
    Attributes:
        domain (str):
        level (SetSpamFilterResultLevel): How hard a domain's incoming mail is filtered (Postfix restriction classes;
            see the
            `spam_filter` family).
        restriction_class (None | str | Unset): The Postfix restriction class applied, if any.
    """

    domain: str
    level: SetSpamFilterResultLevel
    restriction_class: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        domain = self.domain

        level = self.level.value

        restriction_class: None | str | Unset
        if isinstance(self.restriction_class, Unset):
            restriction_class = UNSET
        else:
            restriction_class = self.restriction_class

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "domain": domain,
                "level": level,
            }
        )
        if restriction_class is not UNSET:
            field_dict["restriction_class"] = restriction_class

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        domain = d.pop("domain")

        level = SetSpamFilterResultLevel(d.pop("level"))

        def _parse_restriction_class(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        restriction_class = _parse_restriction_class(d.pop("restriction_class", UNSET))

        set_spam_filter_result = cls(
            domain=domain,
            level=level,
            restriction_class=restriction_class,
        )

        return set_spam_filter_result
