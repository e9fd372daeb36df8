from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.ensure_redirect_result_state import EnsureRedirectResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureRedirectResult")


@_attrs_define
class EnsureRedirectResult:
    """
    Attributes:
        state (EnsureRedirectResultState): Whether a resource exists after an operation: what the OS shows, not what was
            asked.
        directive (None | str | Unset): The `RedirectMatch` line as written into the vhost (absent once removed).
    """

    state: EnsureRedirectResultState
    directive: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        state = self.state.value

        directive: None | str | Unset
        if isinstance(self.directive, Unset):
            directive = UNSET
        else:
            directive = self.directive

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
            }
        )
        if directive is not UNSET:
            field_dict["directive"] = directive

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        state = EnsureRedirectResultState(d.pop("state"))

        def _parse_directive(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        directive = _parse_directive(d.pop("directive", UNSET))

        ensure_redirect_result = cls(
            state=state,
            directive=directive,
        )

        return ensure_redirect_result
