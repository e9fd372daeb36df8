from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.remove_error_pages_result_state import RemoveErrorPagesResultState

if TYPE_CHECKING:
    from ..models.remove_error_pages_result_pages import RemoveErrorPagesResultPages


T = TypeVar("T", bound="RemoveErrorPagesResult")


@_attrs_define
class RemoveErrorPagesResult:
    """
    Attributes:
        pages (RemoveErrorPagesResultPages): The pages the domain's vhost now names (empty once removed).
        state (RemoveErrorPagesResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
    """

    pages: RemoveErrorPagesResultPages
    state: RemoveErrorPagesResultState

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
        from ..models.remove_error_pages_result_pages import RemoveErrorPagesResultPages

        d = dict(src_dict)
        pages = RemoveErrorPagesResultPages.from_dict(d.pop("pages"))

        state = RemoveErrorPagesResultState(d.pop("state"))

        remove_error_pages_result = cls(
            pages=pages,
            state=state,
        )

        return remove_error_pages_result
