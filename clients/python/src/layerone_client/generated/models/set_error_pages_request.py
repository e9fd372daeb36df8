from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.set_error_pages_request_pages import SetErrorPagesRequestPages


T = TypeVar("T", bound="SetErrorPagesRequest")


@_attrs_define
class SetErrorPagesRequest:
    """
    Attributes:
        account (str):
        id (str): The web domain's id: one set of error pages per domain.
        pages (SetErrorPagesRequestPages): The whole set: it replaces the last (a status left out is Apache's again).
    """

    account: str
    id: str
    pages: SetErrorPagesRequestPages

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        pages = self.pages.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "pages": pages,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.set_error_pages_request_pages import SetErrorPagesRequestPages

        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        pages = SetErrorPagesRequestPages.from_dict(d.pop("pages"))

        set_error_pages_request = cls(
            account=account,
            id=id,
            pages=pages,
        )

        return set_error_pages_request
