from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.set_error_pages_result_state import SetErrorPagesResultState

if TYPE_CHECKING:
    from ..models.set_error_pages_result_pages import SetErrorPagesResultPages


T = TypeVar("T", bound="SetErrorPagesResult")


@_attrs_define
class SetErrorPagesResult:
    """
    Attributes:
        pages (SetErrorPagesResultPages): The pages the domain's vhost now names (empty once removed).
        state (SetErrorPagesResultState): Whether a resource exists after an operation: what the OS shows, not what was
            asked.
    """

    pages: SetErrorPagesResultPages
    state: SetErrorPagesResultState

    def to_dict(self) -> dict[str, Any]:
        pages = self.pages.to_dict()

        state = self.state.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "pages": pages,
                "state": state,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.set_error_pages_result_pages import SetErrorPagesResultPages

        d = dict(src_dict)
        pages = SetErrorPagesResultPages.from_dict(d.pop("pages"))

        state = SetErrorPagesResultState(d.pop("state"))

        set_error_pages_result = cls(
            pages=pages,
            state=state,
        )

        return set_error_pages_result
